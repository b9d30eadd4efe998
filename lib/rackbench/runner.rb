# frozen_string_literal: true

require_relative "runner/bundle_cache"
require_relative "runner/cpu_layout"
require_relative "runner/identity"
require_relative "runner/load_run"
require_relative "runner/machine_load"
require_relative "runner/progress"
require_relative "runner/results_dir"
require_relative "runner/server_env"
require_relative "runner/server_launch"
require_relative "runner/trial_loop"
require_relative "runner/trial_runner"

module Rackbench
  # Runs a whole experiment: resolves its rubies, plans its trials in seeded
  # order (saying up front what cannot run), then runs every trial not yet
  # stored, committing each to the store before the next begins. An
  # interrupted run (Ctrl-C, kill -9) loses nothing: `--resume` runs what
  # is missing, never a trial twice.
  #
  #   Runner.new(experiment: Experiment.load("exp.yml"), results_dir: "rackbench-results").run
  class Runner
    Summary = Struct.new(:experiment_id, :ok, :failed, :skipped, :already_done, keyword_init: true)

    # The machine's description to store with an experiment (warnings
    # printed on err), with the rubies' descriptions and the CPU layout.
    # `rackbench micro` stores the same.
    # The warnings are kept with the description, so every report view
    # shows how far to trust the figures.
    def self.capture_environment(err:, variants:, layout:)
      env = MachineEnv.capture
      warnings = MachineEnv.warnings(env)
      warnings.each { |warning| err.puts "rackbench: warning: #{warning}" }
      env.merge(warnings: warnings, rubies: variants.transform_values(&:description), cpu_layout: layout.to_h)
    end

    # :experiment :: an Experiment
    # :results_dir :: results directory (SQLite store, logs/, work/)
    # :resume :: continue an experiment that already has trials in the store (default: false)
    # :fail_fast :: stop at the first failed trial (default: false)
    # :out, :err :: where progress and warnings go
    # :engine :: the LoadEngine (default: the native engine)
    # :installs :: Rubies::Install list (default: Rubies.discover)
    # :bundle_root :: cache of Bundler environments (default: BundleEnv.default_root)
    # :bundles :: what provides a trial's Bundler environment (default: a BundleCache over bundle_root)
    # :layout :: CpuLayout (default: detected from this process's CPUs)
    # :ready_timeout_s :: per-server boot allowance (default: 60)
    # :stop_grace_s :: time a server gets to exit after TERM before KILL (default: 10)
    # :environment :: machine description (default: MachineEnv.capture)
    def initialize(experiment:, results_dir:, resume: false, fail_fast: false, out: $stdout, err: $stderr,
                   engine: LoadEngine.new, installs: nil, bundle_root: nil, bundles: nil, layout: CpuLayout.detect,
                   ready_timeout_s: 60, stop_grace_s: 10, environment: nil)
      @experiment = experiment
      @results_dir = File.expand_path(results_dir)
      @resume = resume
      @fail_fast = fail_fast
      @out = out
      @err = err
      @engine = engine
      @installs = installs
      @bundles = bundles || BundleCache.new(root: bundle_root, out: out, marker_env: Watchdog.marker_env(@results_dir))
      @layout = layout
      @ready_timeout_s = ready_timeout_s
      @stop_grace_s = stop_grace_s
      @environment = environment
    end

    # The resolved ruby variants, label => Rubies::Variant (ConfigError for
    # a ruby that does not exist: before anything is stored).
    def variants
      @variants ||= begin
        installs = @installs || Rubies.discover
        @experiment.rubies.to_h do |spec|
          variant = Rubies.resolve({ name: spec.label, ruby: spec.ruby, options: spec.options, env: spec.env },
                                   installs: installs)
          [spec.label, variant]
        end
      end
    end

    # The plan, with what the server adapters cannot run removed up front.
    def plan
      @plan ||= Plan.new(@experiment, unsupported: lambda do |config|
        engine = variants.fetch(config.ruby.label).install.engine
        Servers.fetch(config.server.name).unsupported_reason(processes: config.processes, threads: config.threads,
                                                             ruby_engine: engine, options: config.server.options) ||
          (config.app.builtin ? Apps.builtin(config.app.name).unsupported_reason(engine) : nil)
      end)
    end

    # Runs what is left of the experiment; returns a Summary. Raises
    # Interrupted after Ctrl-C (the current server stopped, the run marked
    # interrupted) and UsageError when the store already holds this
    # experiment's trials and resume was not asked for.
    def run
      ResultsDir.check_writable!(@results_dir) # before minutes of ruby discovery
      ResultsDir.lock(@results_dir) { run_locked }
    end

    private

    def run_locked
      check_pass_env!
      plan # resolve rubies and adapters before touching the store
      environment = @environment || capture_environment
      with_watchdog { store_and_run(environment) }
    end

    # An earlier runner of this directory that died (kill -9) may have left
    # processes behind that its own watchdog could not stop: stop them
    # before measuring next to them. Then watch this run the same way.
    def with_watchdog
      left = Watchdog.sweep(results_dir: @results_dir, grace_s: @stop_grace_s)
      stopped = left[:termed] + left[:killed]
      @err.puts "rackbench: stopped #{stopped} process(es) an earlier run of #{@results_dir} left behind" if stopped.positive?
      watchdog = Watchdog.start(results_dir: @results_dir, grace_s: @stop_grace_s)
      begin
        yield
      ensure
        watchdog.stop
      end
    end

    def store_and_run(environment)
      Store.open(@results_dir) do |store|
        experiment_id = store.find_or_create_experiment(
          name: @experiment.name, fingerprint: @experiment.fingerprint, seed: @experiment.seed,
          batches: @experiment.batches, source_text: @experiment.source_text, environment: environment
        )
        done = store.finished_keys(experiment_id)
        refuse_rerun(done) unless done.empty? || @resume
        run_remaining(store, experiment_id, done, environment)
      end
    end

    # A variable the experiment passes from the shell must be there: a
    # server started without its DATABASE_URL would fail in ways that name
    # anything but the cause.
    def check_pass_env!
      missing = @experiment.pass_env.reject { |name| ENV.key?(name) }
      return if missing.empty?

      raise ConfigError, "pass_env names #{missing.join(", ")}, not set in this shell: export " \
                         "#{missing.size == 1 ? "it" : "them"} or remove #{missing.size == 1 ? "it" : "them"} from pass_env"
    end

    def capture_environment
      Runner.capture_environment(err: @err, variants: variants, layout: @layout)
    end

    def refuse_rerun(done)
      raise UsageError, "#{@results_dir} already holds #{done.size} trials of experiment '#{@experiment.name}': " \
                        "add --resume to finish it, or choose another --results directory"
    end

    def run_remaining(store, experiment_id, done, environment)
      remaining = plan.remaining(done)
      announce(done, remaining)
      trial_runner = build_trial_runner
      estimate_s = remaining.empty? ? nil : plan.estimated_s(remaining) / remaining.size
      TrialLoop.new(store: store, experiment_id: experiment_id, plan: plan, remaining: remaining,
                    resumed: !done.empty?, out: @out, describe: method(:describe), estimated_trial_s: estimate_s,
                    fail_fast: @fail_fast, environment: environment).run { |trial| trial_runner.run(trial) }
    end

    def build_trial_runner
      TrialRunner.new(variants: variants, bundles: @bundles, engine: @engine,
                      layout: @layout, results_dir: @results_dir, seed: @experiment.seed,
                      pass_env: @experiment.pass_env, watched_env: watched_env,
                      ready_timeout_s: @ready_timeout_s, stop_grace_s: @stop_grace_s)
    end

    # Every variable a ruby variant, an app or the experiment's env sets
    # somewhere in this experiment: each trial's identity check verifies
    # its own value of each, so the plain variant proves it runs without
    # the YJIT variant's MALLOC_ARENA_MAX, not only the reverse.
    def watched_env
      apps = @experiment.apps.flat_map do |spec|
        own = spec.builtin ? Apps.builtin(spec.name).env.to_h.keys : []
        own + spec.env.to_h.keys
      end
      (@experiment.rubies.flat_map { |r| r.env.keys } + @experiment.env.keys + apps).uniq
    end

    def announce(done, remaining)
      @out.puts "Experiment #{@experiment.name}: #{plan.size} trials" \
                "#{", #{done.size} already stored" unless done.empty?}, #{remaining.size} to run " \
                "(about #{Plan.format_duration(plan.estimated_s(remaining))}); results in #{@results_dir}"
      plan.skipped.each { |s| @out.puts "  skipped: #{s.config} (#{s.reason})" }
      return unless @layout.pinned?

      @out.puts "  server on CPU #{@layout.server_cpus.join(",")}, load engine on CPU #{@layout.engine_cpus.join(",")}"
    end

    def describe(attrs)
      unless attrs[:status] == "ok"
        # The stored reason may end with the server log's tail: one line here.
        first, *rest = attrs[:reason].to_s.lines.map(&:strip).reject(&:empty?)
        return "FAILED: #{first}#{" (see #{attrs[:log_path]})" if rest.any? && attrs[:log_path]}"
      end

      format("ok %.1f req/s, p99 %s", attrs[:rps], LoadSummary.format_us(attrs[:latency_us]["p99"]))
    end
  end
end
