# frozen_string_literal: true

require "open3"
require "rbconfig"
require "stringio"
require_relative "failure_logs"

module Rackbench
  module Test
    # The one way a test runs the `rackbench` command: in this process
    # (#cli, the unit tier: no process) or as a user's shell would
    # (#rackbench, the integration tier: exe/rackbench in a ruby of its
    # own). Both start from a clean environment, so a developer who
    # exported RACKBENCH_STORE (or another project's Bundler settings)
    # cannot make a test read or write their own database.
    module Cli
      include FailureLogs

      ROOT = File.expand_path("../..", __dir__)
      EXE = File.join(ROOT, "exe", "rackbench")

      # The variables of a developer's shell that change what `rackbench`
      # does (where it stores, which engine, which ssh, which bundle): unset
      # for every command a test runs, unless the test sets them itself.
      # RACKBENCH_CACHE is not among them: it is how a whole suite is
      # pointed at an empty cache (the cold run of doc/performance.md), so
      # it is the suite's own setting, as RACKBENCH_PROBE_CACHE is the
      # integration tier's (Rakefile).
      DEVELOPER_VARIABLES = %w[RACKBENCH_STORE RACKBENCH_RESULTS_DIR RACKBENCH_ENGINE RACKBENCH_SSH_COMMAND
                               RACKBENCH_CCACHE].freeze

      # The unit tier's process too: CLI.run reads ENV (--store's default).
      def self.clean_process_env!
        DEVELOPER_VARIABLES.each { |name| ENV.delete(name) }
      end

      # The environment exe/rackbench runs in: the developer's variables
      # and every Bundler variable unset, then this checkout's bundle, as
      # `bundle exec rackbench` in it would have; +env+ (the test's own)
      # wins over all of it. Values are nil for "unset" (Process.spawn).
      def self.env(env = {})
        inherited = ENV.keys.grep(/\A(BUNDLE_|BUNDLER_)/) - %w[BUNDLE_SILENCE_ROOT_WARNING]
        unset = (DEVELOPER_VARIABLES + inherited + %w[RUBYOPT RUBYLIB]).to_h { |name| [name, nil] }
        unset.merge("BUNDLE_GEMFILE" => File.join(ROOT, "Gemfile"), "RUBYOPT" => "-rbundler/setup").merge(env)
      end

      # The argv that runs exe/rackbench with +args+ under the test's ruby.
      # A `run` that does not set --ready-timeout gets 60 s times this
      # machine's busy_factor now: in a test a boot's deadline guards
      # against a hang, never a claim, and Redmine or JRuby boot in seconds
      # on an idle machine but take minutes at load average 30.
      def cli_argv(*args)
        if args.first == "run" && !args.include?("--ready-timeout")
          args += ["--ready-timeout", "#{(Runner::READY_TIMEOUT_S * busy_factor).ceil}s"]
        end
        [RbConfig.ruby, EXE, *args]
      end

      # Runs exe/rackbench with +args+ to its end; returns [stdout, stderr,
      # Process::Status]. Should the test fail, its trials' logs are printed
      # (FailureLogs).
      #
      # :env :: variables of the test's own, over the clean environment (default: {})
      # :chdir :: the directory it runs in (default: this one)
      # :stdin_data :: what it reads (default: nothing)
      def rackbench(*args, env: {}, chdir: Dir.pwd, stdin_data: "")
        note_results_dir(args, chdir)
        Open3.capture3(Cli.env(env), *cli_argv(*args), chdir: chdir, stdin_data: stdin_data)
      end

      # As #rackbench, failing the test unless it exits 0; returns stdout.
      def assert_rackbench(*args, **options)
        out, err, status = rackbench(*args, **options)
        assert status.success?, "rackbench #{args.join(" ")} exited #{status.exitstatus}: #{err}"
        out
      end

      # Starts exe/rackbench with +args+ in a process group of its own
      # (a test can signal the group as a terminal would); returns its pid,
      # for the test to wait for.
      #
      # :env :: as for #rackbench
      # :options :: Process.spawn's (default: output to /dev/null)
      def spawn_rackbench(*args, env: {}, **options)
        note_results_dir(args, options.fetch(:chdir, Dir.pwd))
        Process.spawn(Cli.env(env), *cli_argv(*args), **spawn_defaults(options).merge(options))
      end

      # Output to /dev/null and a group of its own, unless +options+ say
      # otherwise: a redirection given for several streams at once
      # (`%i[out err] => log`) replaces both defaults, which Process.spawn
      # would otherwise refuse as one stream given twice.
      def spawn_defaults(options)
        redirected = options.keys.flat_map { |key| Array(key) }
        { out: File::NULL, err: File::NULL, pgroup: true }.reject { |stream, _| redirected.include?(stream) }
      end

      # Runs the command in this process (Rackbench::CLI.run), as the unit
      # tier does; returns [exit code, stdout, stderr].
      #
      # :env :: variables set in this process for the command alone (nil: unset) (default: {})
      def cli(*argv, env: {})
        out = StringIO.new
        err = StringIO.new
        saved = env.keys.to_h { |name| [name, ENV.fetch(name, nil)] }
        begin
          env.each { |name, value| ENV[name] = value }
          code = Rackbench::CLI.run(argv, out: out, err: err)
        ensure
          saved.each { |name, value| ENV[name] = value }
        end
        [code, out.string, err.string]
      end
    end
  end
end

Rackbench::Test::Cli.clean_process_env!
