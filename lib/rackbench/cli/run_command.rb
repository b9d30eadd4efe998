# frozen_string_literal: true

require "fileutils"
require "json"
require "shellwords"
require_relative "command"
require_relative "report_options"
require_relative "source_run"

module Rackbench
  module CLI
    # `rackbench run [FILE]`: runs an experiment (the built-in quick one
    # without a file), storing every trial as it finishes, and ends with the
    # results table.
    class RunCommand < Command
      include ReportOptions
      include SourceRun

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        files = parse(argv, options)
        return CLI::EXIT_OK unless files
        raise UsageError, "run takes at most one experiment file (see rackbench run --help)" if files.size > 1
        raise UsageError, "--retry-failed only works with --resume" if options[:retry_failed] && !options[:resume]
        given = FLEET_ONLY.select { |key, _| options.key?(key) }.values
        raise UsageError, "#{given.join(" and ")} only work#{"s" if given.size == 1} with --fleet" if !options[:fleet] && given.any?

        options[:detect] = detect_settings(options)
        experiment = load_experiment(files.first, options)
        return run_fleet(experiment, options, files) if options[:fleet] && !options[:dry_run]

        run_source(experiment, options, resume: resume_command(files, options))
      end

      private

      DETECT_ONLY = { pilot_batches: "--pilot-batches", max_batches: "--max-batches",
                      time_budget_s: "--time-budget", measure: "--detect-measure" }.freeze
      private_constant :DETECT_ONLY

      # The Detect::Settings of --detect and its options, or nil.
      def detect_settings(options)
        unless options[:detect_effect]
          given = DETECT_ONLY.select { |key, _| options.key?(key) }.values
          raise UsageError, "#{given.join(", ")} only work#{"s" if given.size == 1} with --detect" unless given.empty?

          return nil
        end
        raise UsageError, "--detect chooses the batches; use --max-batches instead of --batches" if options[:batches]

        Detect::Settings.new(effect: options[:detect_effect], baseline: options[:baseline],
                             **options.slice(*DETECT_ONLY.keys))
      end

      FLEET_ONLY = { testbed: "--testbed", detach: "--detach" }.freeze
      private_constant :FLEET_ONLY

      # --fleet: the batches go to the queue, workers run them (Fleet::Submit).
      def run_fleet(experiment, options, files)
        check_fleet_options(options)
        summary = Fleet::Submit.new(experiment, store: options[:fleet], testbed: options[:testbed] || Fleet::DEFAULT_TESTBED,
                                                resume: options[:resume], retry_failed: options[:retry_failed],
                                                detach: options[:detach], labels: Labels.parse(options[:labels] || []),
                                                out: options[:json] ? @err : @out, err: @err).run
        return CLI::EXIT_OK unless summary

        FileUtils.mkdir_p(options[:results]) # report.html goes there
        print_experiment_report(options[:results], summary, json: options[:json], baseline: options[:baseline],
                                                            store: options[:fleet], width: output_width(options))
        summary.failed.zero? ? CLI::EXIT_OK : CLI::EXIT_FAILURE
      rescue Interrupted => e
        @err.puts "rackbench: #{e.message}: follow again with #{[*resume_command(files, options), "--fleet",
                                                                 options[:fleet]].shelljoin}"
        CLI::EXIT_INTERRUPTED
      end

      # What a fleet cannot do, refused with the reason.
      def check_fleet_options(options)
        if options[:detect]
          raise UsageError, "--detect decides each batch from the batches before it, and a fleet runs batches at " \
                            "once: run --detect on one host, or give --batches to the fleet"
        end
        raise UsageError, "--fail-fast stops one host at its first failure; a fleet runs on: leave it out" if options[:fail_fast]
        raise UsageError, "--fleet takes the database URL; --store is for a local run" if options[:store]
      end

      def load_experiment(file, options)
        experiment = file ? Experiment.load(file) : Experiment.default
        # Its matrix alone would run closed loop and answer another question.
        raise UsageError, "#{file} has a capacity: section: run it with rackbench capacity #{file}" if experiment.capacity

        if options[:detect]&.measure == "cpu" && experiment.inside == "off"
          raise UsageError, "--detect-measure cpu needs the in-server agent, but #{file} sets inside: off"
        end
        if options[:detect]&.measure == "instructions" && !experiment.instructions?
          raise UsageError, "--detect-measure instructions needs instructions trials: add measure: instructions " \
                            "(and load.count) to #{file || "the experiment"}"
        end

        overrides = options.slice(:seed, :batches)
        # --detect's plan is made for its most batches; the run stops when it knows.
        overrides[:batches] = options[:detect].max_batches if options[:detect]
        overrides.empty? ? experiment : experiment.with(**overrides)
      end

      def resume_command(files, options)
        words = ["rackbench", "run", *files, "--resume", "--results", options[:results]]
        words.push("--store", options[:store]) if options[:store]
        words.push("--seed", options[:seed].to_s) if options[:seed]
        words.push("--batches", options[:batches].to_s) if options[:batches]
        words.push("--baseline", options[:baseline]) if options[:baseline]
        Array(options[:labels]).each { |pair| words.push("--label", pair) }
        detect = options[:detect]
        return words unless detect

        words.push("--detect", Detect.percent(detect.effect), "--pilot-batches", detect.pilot_batches.to_s,
                   "--max-batches", detect.max_batches.to_s)
        words.push("--time-budget", "#{detect.time_budget_s}s") if detect.time_budget_s
        words.push("--detect-measure", detect.measure) unless detect.measure == "rps"
        words
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench run [options] [EXPERIMENT.yml]") do |p|
          p.separator "Runs an experiment (doc/experiment.md); without a file, the built-in quick one."
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--resume", "finish an interrupted experiment: run only the trials not yet stored") do
            options[:resume] = true
          end
          p.on("--retry-failed", "with --resume: run the stored failed trials again (the failures are kept as history)") do
            options[:retry_failed] = true
          end
          p.on("--dry-run", "print the plan (trials in order, skipped combinations) and stop") do
            options[:dry_run] = true
          end
          p.on("--seed N", Integer, "override the experiment's seed") { |v| options[:seed] = v }
          p.on("--batches N", Integer, "override the experiment's number of batches") { |v| options[:batches] = v }
          p.on("--fail-fast", "stop at the first failed trial") { options[:fail_fast] = true }
          p.on("--ready-timeout DURATION", "how long a server may take to boot and answer its first request " \
                                           "(default 60s)") do |v|
            options[:ready_timeout_s] = duration_s(v, "--ready-timeout")
          end
          p.on("--detect PCT", "run a pilot, then the batches that detect a PCT difference (80% power, " \
                               "95% confidence), then stop (doc/methodology.md)") do |v|
            options[:detect_effect] = fraction(v, "--detect")
          end
          p.on("--pilot-batches N", Integer, "with --detect: batches of the pilot (default 5)") do |v|
            options[:pilot_batches] = v
          end
          p.on("--max-batches N", Integer, "with --detect: the most batches to run (default 50)") do |v|
            options[:max_batches] = v
          end
          p.on("--time-budget DURATION", "with --detect: the most wall time the experiment may take, e.g. 30m") do |v|
            options[:time_budget_s] = duration_s(v, "--time-budget")
          end
          p.on("--detect-measure rps|cpu|instructions", "with --detect: plan and judge on requests/s (default), on " \
                                                        "server CPU µs per request (lower noise on a shared machine) " \
                                                        "or on instructions per request (measure: instructions)") do |v|
            options[:measure] = v
          end
          p.on("--baseline SPEC", "what each configuration is compared with, e.g. 'server=puma' " \
                                  "(default: the first configuration)") { |v| options[:baseline] = v }
          label_option(p, options)
          p.on("--fleet URL", "queue the batches in this PostgreSQL database for rackbench worker on each host, " \
                              "and follow them (doc/fleet.md)") { |v| options[:fleet] = v }
          p.on("--testbed NAME", "with --fleet: the testbed whose workers run it (default #{Fleet::DEFAULT_TESTBED})") do |v|
            options[:testbed] = v
          end
          p.on("--detach", "with --fleet: queue the batches and return") { options[:detach] = true }
          p.on("--json", "print the results as JSON (progress goes to stderr)") { options[:json] = true }
          wide_option(p, options)
        end
      end
    end
  end
end
