# frozen_string_literal: true

module Rackbench
  # Entry point of the `rackbench` command. CLI.run returns an exit code and
  # never calls exit; each subcommand is a small class loaded only when used.
  # One rescue ladder turns known errors into a single line on stderr.
  module CLI
    EXIT_OK = 0
    EXIT_FAILURE = 1
    EXIT_USAGE = 2
    # `rackbench gate` (and `compare --fail-on`): a configuration regressed
    # beyond a threshold; the results cannot say (doc/ci.md, "Exit codes").
    EXIT_REGRESSED = 3
    EXIT_CANNOT_SAY = 4
    EXIT_INTERRUPTED = 130
    DEFAULT_RESULTS_DIR = "rackbench-results"
    # The results database of every command when --store is not given: a
    # database URL (postgres://...), or a results directory.
    STORE_ENV = "RACKBENCH_STORE"

    # name => [file under rackbench/cli, class name, one-line description]
    COMMANDS = {
      "run" => ["run_command", "RunCommand", "run an experiment (the built-in quick one without a file)"],
      "check" => ["check_command", "CheckCommand", "boot each app once per ruby and server: what would fail, the load it would use"],
      "report" => ["report_command", "ReportCommand", "statistics, verdicts and charts of a stored experiment"],
      "profile" => ["profile_command", "ProfileCommand", "profile each configuration under load (StackProf): top frames, flame graphs, speedscope"],
      "tune" => ["tune_command", "TuneCommand", "the best processes × threads within a memory budget and a latency target"],
      "capacity" => ["capacity_command", "CapacityCommand", "per configuration, the highest open-loop rate that holds a latency target"],
      "compare" => ["compare_command", "CompareCommand", "compare two configurations or two experiments: ratio, CI, verdict"],
      "gate" => ["gate_command", "GateCommand", "fail when a configuration regressed beyond a threshold (CI): exit 0, 3 or 4"],
      "history" => ["history_command", "HistoryCommand", "each configuration's figure across labelled runs, change points marked"],
      "bisect" => ["bisect_command", "BisectCommand", "the commit of a ruby or an app (git) that made a figure worse"],
      "publish" => ["publish_command", "PublishCommand", "a static site of every run: timelines, regressions, comparisons, a feed"],
      "regressions" => ["regressions_command", "RegressionsCommand", "the regressions publish tracks: list, show, set a state"],
      "record-failure" => ["record_failure_command", "RecordFailureCommand", "record a run that could not start (a build that failed) for publish's timeline"],
      "prune" => ["prune_command", "PruneCommand", "delete old runs' trials, keeping the medians publish draws"],
      "worker" => ["worker_command", "WorkerCommand", "run the batches a fleet's queue holds for this host's testbed"],
      "store" => ["store_command", "StoreCommand", "copy results between stores (SQLite, PostgreSQL); upgrade a shared store"],
      "load" => ["load_command", "LoadCommand", "drive HTTP load at a URL with the native engine"],
      "rubies" => ["rubies_command", "RubiesCommand", "list the Ruby installations rackbench finds; `rubies build` builds one from source"],
      "cache" => ["cache_command", "CacheCommand", "list what rackbench keeps between runs (built rubies, gem environments); prune it"],
      "servers" => ["servers_command", "ServersCommand", "list the app-server adapters and what each supports"],
      "apps" => ["apps_command", "AppsCommand", "list the benchmark apps shipped with rackbench"],
      "services" => ["services_command", "ServicesCommand", "list the services and proxies rackbench can start beside a server"],
      "micro" => ["micro_command", "MicroCommand", "run a micro-benchmark outside HTTP (fibers: threads, processes, fibers over pipes)"]
    }.freeze

    USAGE = <<~TEXT
      Usage: rackbench COMMAND [options]

      Commands:
      #{COMMANDS.map { |name, (_, _, text)| format("  %-14s %s", name, text) }.join("\n")}

      rackbench COMMAND --help shows the options of a command.
      rackbench --version prints the version.
    TEXT

    module_function

    def run(argv, out: $stdout, err: $stderr)
      command, *rest = argv
      case command
      when nil, "-h", "--help", "help"
        out.print USAGE
        command.nil? ? EXIT_USAGE : EXIT_OK
      when "-v", "--version", "version"
        out.puts "rackbench #{VERSION}"
        EXIT_OK
      else
        entry = COMMANDS[command] or raise UsageError, "unknown command '#{command}' (see rackbench --help)"
        require_relative "cli/#{entry[0]}"
        CLI.const_get(entry[1]).new(out: out, err: err).run(rest)
      end
    rescue UsageError, ConfigError => e
      err.puts "rackbench: #{e.message}"
      EXIT_USAGE
    rescue Interrupted, Interrupt
      err.puts "rackbench: interrupted"
      EXIT_INTERRUPTED
    rescue Error => e
      err.puts "rackbench: #{e.message}"
      EXIT_FAILURE
    end
  end
end
