# frozen_string_literal: true

require "fileutils"
require "shellwords"

module Rackbench
  module Trial
    class Http < Kind
      # Runs the commands the experiment gives the user's own app
      # (doc/experiment.md, apps[].setup and apps[].reset):
      #
      # setup :: once per Bundler environment (app x ruby install x server),
      #          before its first trial, e.g. `bin/rails db:prepare`. Its
      #          output goes to logs/setup-APP-RUBY-SERVER.log. A failure is
      #          remembered: every trial of that environment fails at once
      #          with the same reason, instead of running it again.
      # reset :: before each trial, e.g. restoring a copy of the database;
      #          its output goes to reset.log in the trial's directory. A
      #          failure fails that trial.
      #
      # Each runs in the app's directory with the trial's whole environment
      # (ServerEnv: RAILS_ENV, the bundle's variables, ...) and a deadline.
      # How a command line runs (Hooks.argv): `bundle exec NAME ...` and a
      # Ruby script of the app (`bin/rails ...`) run under the trial's ruby
      # and options with the bundle set up, through the same launcher as the
      # server; anything else runs as the program it names (no shell: write
      # `sh -c '...'` for one).
      class AppHooks
        # What a hook that ran reports, kept in the trial's identity
        # ("hooks"): the command, how long it took, where its output is.
        Ran = Struct.new(:command, :duration_s, :log, keyword_init: true) do
          def to_h
            { "command" => command, "duration_s" => duration_s.round(4), "log" => log }
          end
        end

        TAIL_LINES = 10

        # :logs_dir :: the run's logs directory (setup logs)
        # :child :: runs a command like Rubies::Child.run (default: Rubies::Child)
        def initialize(logs_dir:, child: Rubies::Child)
          @logs_dir = logs_dir
          @child = child
          @setups = {}
        end

        # The argv that runs +command+ (a String) for +app_dir+: through the
        # launcher (+exec_prefix+: the variant's ruby, its options and the
        # bundle) for `bundle exec NAME ...` and for a Ruby script file of the
        # app (`bin/rails ...`, `setup.rb`, `ruby setup.rb`, `bundle exec ruby
        # setup.rb`); as a program otherwise.
        def self.argv(command, app_dir:, exec_prefix:)
          words = Shellwords.split(command)
          bundled = words.first(2) == %w[bundle exec] && words.size > 2
          words = words.drop(2) if bundled
          # `ruby setup.rb` (bundled or not) is the variant's ruby running
          # the app's script, as users write it.
          words = words.drop(1) if words.first == "ruby" && words.size > 1 && !words[1].start_with?("-")
          script = File.expand_path(words.first, app_dir)
          return exec_prefix + [script, *words.drop(1)] if !words.first.start_with?("/") && ruby_script?(script)
          return exec_prefix + words if bundled

          words
        end

        # A file whose name ends in .rb or whose #! line names ruby.
        def self.ruby_script?(path)
          return false unless File.file?(path)
          return true if path.end_with?(".rb")

          File.open(path, "rb") { |f| f.gets(200).to_s }.match?(/\A#!.*\bruby/)
        rescue SystemCallError
          false
        end

        # Runs the app's hooks that are due before a trial's server boots:
        # its setup the first time its environment is seen, its reset every
        # time. Returns what ran, {"setup" => Ran#to_h, "reset" => ...}
        # (setup only on the trial that ran it; {} for an app without hooks).
        # Raises SetupError naming the hook and quoting its error.
        #
        # :app :: the App; :bundle :: its installed BundleEnv; :variant :: the Rubies::Variant
        # :adapter :: the server adapter; :env :: the trial's ServerEnv; :work_dir :: the trial's directory
        def before_trial(app:, bundle:, variant:, adapter:, env:, work_dir:)
          ran = {}
          if app.setup_hook
            setup = setup_once(app, bundle, variant, adapter, env)
            ran["setup"] = setup.to_h if setup
          end
          if app.reset_hook
            log = File.join(work_dir, "reset.log")
            File.write(log, "")
            ran["reset"] = run("reset", app.reset_hook, app, bundle, variant, env, log).to_h
          end
          ran
        end

        private

        # The setup of the trial's environment, run now if it never ran:
        # Ran when it ran now, nil when it already had. A failure is
        # remembered and raised again for each trial of the environment.
        def setup_once(app, bundle, variant, adapter, env)
          key = [app.dir, variant.install.path, adapter.name]
          if @setups.key?(key)
            earlier = @setups[key]
            raise earlier if earlier.is_a?(SetupError)

            return nil
          end

          name = "setup-#{app.name}-#{variant.install.name}-#{adapter.name}.log".gsub(/[^\w.-]/, "_")
          log = File.join(@logs_dir, name)
          File.write(log, "")
          @setups[key] = run("setup", app.setup_hook, app, bundle, variant, env, log)
        rescue SetupError => e
          @setups[key] = e
          raise
        end

        def run(name, hook, app, bundle, variant, env, log)
          argv = AppHooks.argv(hook.command, app_dir: app.dir, exec_prefix: bundle.exec_prefix(variant.command))
          File.write(log, "# #{name}: #{hook.command}\n# #{Shellwords.join(argv)}\n", mode: "a")
          offset = File.size(log)
          started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          result = @child.run(argv, env: env.to_h, timeout_s: hook.timeout_s, log_path: log, chdir: app.dir)
          duration_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
          forget_identity_reports(env)
          return Ran.new(command: hook.command, duration_s: duration_s, log: log) if result.success?

          what = if result.timed_out then "timed out after #{Units.seconds(hook.timeout_s)}"
                 else "exited with status #{result.status.exitstatus}"
                 end
          tail = tail(log, offset)
          error = ServerProcess::LogError.line(tail) || "no output"
          raise SetupError, "app #{name} `#{hook.command}` #{what}: #{error} (log: #{log})\n#{tail}"
        rescue SystemCallError => e
          raise SetupError, "cannot run the #{name} of #{app.name} (`#{hook.command}`): #{e.message}"
        end

        # A hook run through the launcher reports its identity like a
        # server process would; it is none.
        def forget_identity_reports(env)
          dir = env["RACKBENCH_TRIAL_DIR"]
          FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(dir), "*"))) if dir
        end

        def tail(log, offset)
          text = File.open(log, "rb") do |file|
            file.seek(offset)
            file.read
          end
          lines = text.force_encoding(Encoding::UTF_8).scrub.lines.map(&:rstrip).reject(&:empty?)
          lines.empty? ? "no output" : lines.last(TAIL_LINES).join("\n")
        end
      end
    end
  end
end
