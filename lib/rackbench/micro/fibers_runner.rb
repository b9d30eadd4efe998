# frozen_string_literal: true

require "fileutils"
require_relative "../monotonic_clock"

module Rackbench
  module Micro
    # Runs `rackbench micro fibers`: resolves the rubies, plans the runs in
    # seeded order (saying up front what cannot run), then runs each one
    # not yet stored in a fresh process of its ruby, storing it as a trial
    # before the next starts. Like Runner, an interrupted run loses nothing
    # and `resume` runs only what is missing.
    #
    # Each run is the benchmark script under the variant's interpreter,
    # options and environment, in a Bundler-free environment (as the
    # runner's children get), in its own process group, pinned to the
    # server CPUs, behind rackbench-guard (so that it dies with rackbench),
    # with a deadline: on timeout or Ctrl-C the whole group gets TERM, then
    # KILL, and is reaped.
    class FibersRunner
      include MonotonicClock

      GUARD = File.expand_path("../../rackbench-guard", __dir__)
      # Time a TERMed benchmark process gets before KILL, after a runner died.
      STOP_GRACE_S = 5

      attr_reader :settings

      # :settings :: Settings
      # :results_dir :: results directory (results.db, logs/, work/)
      # :resume :: continue an experiment that already has trials (default: false)
      # :out, :err :: where progress and warnings go
      # :installs :: Rubies::Install list (default: Rubies.discover)
      # :layout :: Runner::CpuLayout (default: detected, or settings.cpus)
      # :environment :: machine description to store (default: MachineEnv.capture)
      # :script :: the benchmark script (default: FIBERS_SCRIPT)
      def initialize(settings:, results_dir:, resume: false, out: $stdout, err: $stderr, installs: nil, layout: nil,
                     environment: nil, script: FIBERS_SCRIPT)
        @settings = settings
        @results_dir = File.expand_path(results_dir)
        @resume = resume
        @out = out
        @err = err
        @installs = installs
        @layout = layout || layout_for(settings.cpus)
        @environment = environment
        @script = script
      end

      # label => Rubies::Variant; ConfigError for a ruby that does not exist.
      def variants
        @variants ||= begin
          installs = @installs || Rubies.discover
          @settings.rubies.to_h do |spec|
            variant = Rubies.resolve(spec, installs: installs)
            [variant.name, variant]
          end
        end
      end

      def plan
        @plan ||= Plan.new(@settings, variants)
      end

      # Runs what is left; returns a Runner::Summary. Raises Interrupted after
      # Ctrl-C (the current run stopped, the run marked interrupted) and
      # UsageError when the store already holds trials of these settings
      # and resume was not asked for.
      def run
        Runner::ResultsDir.check_writable!(@results_dir)
        Runner::ResultsDir.lock(@results_dir) do
          Watchdog.sweep(results_dir: @results_dir, grace_s: STOP_GRACE_S)
          watchdog = Watchdog.start(results_dir: @results_dir, grace_s: STOP_GRACE_S)
          begin
            run_locked
          ensure
            watchdog.stop
          end
        end
      end

      private

      def run_locked
        plan # resolve the rubies before touching the store
        environment = @environment || capture_environment
        Store.open(@results_dir) do |store|
          experiment_id = store.find_or_create_experiment(
            name: @settings.name, fingerprint: @settings.fingerprint, seed: @settings.seed,
            # The settings with modes in the order given (the canonical form
            # sorts them): the report lists modes, and picks its baseline, in
            # that order.
            batches: @settings.batches,
            source_text: JSON.pretty_generate(@settings.canonical.merge("modes" => @settings.modes)),
            environment: environment
          )
          done = store.finished_keys(experiment_id)
          refuse_rerun(done) unless done.empty? || @resume
          run_remaining(store, experiment_id, done)
        end
      end

      def layout_for(cpus)
        return Runner::CpuLayout.detect if cpus.nil?
        return Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil) if cpus == :all

        Runner::CpuLayout.new(server_cpus: cpus, engine_cpus: nil)
      end

      def capture_environment
        Runner.capture_environment(err: @err, variants: variants, layout: @layout)
      end

      def refuse_rerun(done)
        raise UsageError, "#{@results_dir} already holds #{done.size} trials of '#{@settings.name}' with these " \
                          "settings: add --resume to finish it, or choose another --results directory"
      end

      def run_remaining(store, experiment_id, done)
        remaining = plan.remaining(done)
        announce(done, remaining)
        Runner::TrialLoop.new(store: store, experiment_id: experiment_id, plan: plan, remaining: remaining,
                              resumed: !done.empty?, out: @out, describe: method(:describe))
                         .run { |trial| run_trial(trial) }
      end

      # One run in a fresh process; a failure of the run is a failed trial,
      # only Interrupt and store errors escape.
      def run_trial(trial)
        variant = variants.fetch(trial.config.ruby)
        attrs = TrialRecord.base(trial: trial, variant: variant, settings: @settings, cpus: @layout.server_cpus)
        slug = slug(trial)
        log_path = File.join(@results_dir, "logs", "#{slug}.log")
        work_dir = File.join(@results_dir, "work", slug)
        FileUtils.mkdir_p([File.dirname(log_path), work_dir])
        argv = guard + @layout.server_prefix + variant.command + [@script, *TrialRecord.arguments(trial, @settings)]
        File.write(log_path, "# #{argv.join(" ")}\n")
        attrs.merge!(log_path: log_path, started_at: Time.now.utc)
        started = now
        attrs.merge!(execute(argv, child_env(variant, work_dir), log_path))
        attrs.merge!(finished_at: Time.now.utc, wall_s: now - started)
      end

      def execute(argv, env, log_path)
        offset = File.size(log_path)
        result = Rubies::Child.run(argv, env: env, timeout_s: @settings.timeout_s, log_path: log_path)
        TrialRecord.outcome(output: read_from(log_path, offset), exit_status: result.status,
                            timed_out: result.timed_out, timeout_s: @settings.timeout_s)
      rescue SystemCallError => e
        { status: "failed", reason: "cannot start #{argv.first}: #{e.message}" }
      end

      # The environment of rackbench minus what Bundler and version
      # managers leak into it, plus the variant's variables. The trial's
      # directory marks every process of the run (the workers inherit it),
      # as the HTTP runner marks its servers.
      # The run's whole environment, built as a server's is (Runner::ServerEnv):
      # nothing of the shell's but the machine's basics, so an exported
      # RUBY_YJIT_ENABLE cannot turn the plain variant into the YJIT one.
      def child_env(variant, work_dir)
        Runner::ServerEnv.new(parent: ENV, bundle: nil, ruby_env: variant.env,
                              trial_env: { "RACKBENCH_TRIAL_DIR" => work_dir,
                                           **Watchdog.marker_env(@results_dir) }).to_h
      end

      # If rackbench itself dies (kill -9), the benchmark's master gets
      # TERM from the kernel (see rackbench-guard); its workers then read
      # EOF and exit. Without a built guard, the master finishes its run.
      def guard
        File.executable?(GUARD) ? [GUARD, Process.pid.to_s] : []
      end

      def read_from(path, offset)
        File.open(path, "rb") do |file|
          file.seek(offset)
          file.read
        end
      end

      def announce(done, remaining)
        @out.puts "Micro-benchmark fibers, experiment #{@settings.name}: #{plan.size} trials" \
                  "#{", #{done.size} already stored" unless done.empty?}, #{remaining.size} to run; " \
                  "results in #{@results_dir}"
        plan.skipped.each { |s| @out.puts "  skipped: #{s.config} (#{s.reason})" }
        @out.puts "  pinned to CPU #{@layout.server_cpus.join(",")}" if @layout.pinned?
      end

      def describe(attrs)
        return "FAILED: #{attrs[:reason].to_s.lines.first&.strip}" unless attrs[:status] == "ok"

        text = format("ok %.1f msg/s", attrs[:rps])
        attrs[:boot_s] ? "#{text}, setup #{format_s(attrs[:boot_s])}" : text
      end

      def format_s(seconds)
        seconds < 1 ? format("%.1fms", seconds * 1000) : format("%.2fs", seconds)
      end

      def slug(trial)
        c = trial.config
        # The fingerprint tells apart micro experiments sharing a results directory.
        [format("%04d", trial.index), FIBERS_APP, @settings.fingerprint[0, 8], c.ruby, c.mode, "w#{c.workers}",
         "b#{trial.batch}"]
          .join("-").gsub(/[^A-Za-z0-9._-]/, "_")
      end
    end
  end
end
