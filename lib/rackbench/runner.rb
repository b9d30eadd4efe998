# frozen_string_literal: true

require_relative "runner/cpu_layout"
require_relative "runner/estimate"
require_relative "runner/preparation"
require_relative "runner/progress"
require_relative "runner/results_dir"
require_relative "runner/steps"
require_relative "runner/stored_experiment"
require_relative "runner/trial_loop"
require "etc"

module Rackbench
  # Runs every kind of trial the same way: resolves the source's rubies,
  # plans its trials in seeded order (Experiment::Plan, saying up front what
  # cannot run), then runs every trial not yet stored with the source's
  # kind of trial (Trial::Http for an experiment, Trial::Script for a
  # micro-benchmark), committing each Trial::Record to the store before the
  # next begins. An interrupted run (Ctrl-C, kill -9) loses nothing:
  # `--resume` runs what is missing, never a trial twice.
  #
  #   Runner.new(source: Experiment.load("exp.yml"), results_dir: "rackbench-results").run
  class Runner
    # How long a server may take to boot and answer its first request
    # unless the command says (`rackbench run --ready-timeout`).
    READY_TIMEOUT_S = 60

    # not_run :: planned trials a stopping rule (--detect) left unrun
    Summary = Struct.new(:experiment_id, :ok, :failed, :skipped, :already_done, :not_run, keyword_init: true)

    # The machine's description to store with an experiment and each run
    # (the warnings, printed on err, are kept with it, so every report view
    # shows how far to trust the figures), with the rubies' descriptions and
    # the CPU layout.
    def self.capture_environment(err:, variants:, layout:)
      with_run_parts(capture_machine(err: err), variants: variants, layout: layout)
    end

    # The machine's description with its warnings (printed on err): what
    # the runs of one command share (Runner::Steps captures it once for all
    # its steps, so the warnings are printed once).
    def self.capture_machine(err:)
      env = MachineEnv.capture
      warnings = MachineEnv.warnings(env)
      warnings.each { |warning| err.puts "rackbench: warning: #{warning}" }
      env.merge(warnings: warnings)
    end

    # +machine+ (from capture_machine) with what one run adds: its rubies'
    # descriptions and the CPU layout.
    def self.with_run_parts(machine, variants:, layout:)
      machine.merge(rubies: variants.transform_values(&:description), cpu_layout: layout.to_h)
    end

    attr_reader :source

    # :source :: where the configurations come from: an Experiment, or a Micro::Settings
    # :results_dir :: results directory (SQLite store, logs/, work/)
    # :store :: the results database, as Store.open takes it: a database URL (postgres://...) keeps the
    #           results there, the results directory keeping the logs; or an open Store, which the
    #           runner uses and leaves open (default: the results directory)
    # :resume :: continue an experiment that already has trials in the store (default: false)
    # :retry_failed :: with resume, run the stored failed trials again; the failures are kept as the
    #                  trials' history (default: false: resume skips them like the ok ones)
    # :fail_fast :: stop at the first failed trial (default: false)
    # :out, :err :: where progress and warnings go
    # :installs :: Rubies::Install list (default: Rubies.discover)
    # :layout :: CpuLayout (default: the source's, else detected from this process's CPUs)
    # :ready_timeout_s :: per-server boot allowance (default: 60)
    # :stop_grace_s :: time a process gets to exit after TERM before KILL (default: 10)
    # :environment :: machine description (default: MachineEnv.capture)
    # :parent_env :: the shell's environment (default: ENV)
    # :collaborators :: keywords for the kind of trial's constructor: what it drives (a load engine,
    #                   servers, samplers...), for tests to replace (default: {}: the real ones)
    # :watchdog :: what sweeps and watches the run's processes (#sweep, #start like Watchdog; default: Watchdog)
    # :machine :: the machine's description from Runner.capture_machine, taken once for several runs
    #             (Runner::Steps): this run adds its rubies and layout to it (default: nil: captured
    #             here, unless :environment is given)
    # :detect :: Detect::Settings: run a pilot, then only the batches the comparisons need (the source's
    #            batches are the most it may run); stored in the run's environment (default: nil)
    # :labels :: the --label pairs (Hash), stored with the git revisions of the source's apps and rubies
    #            (Labels.capture) as part of the experiment's identity (default: {})
    # :host :: the name stored with each trial as the host that ran it (default: this machine's host name)
    # :batch :: run this batch of the plan only (a fleet's claim, Fleet::Worker) (default: nil: all)
    # :through_batch :: run the plan's batches up to this one only: a command that adds batches while
    #                   its comparisons cannot say (Bisect) runs a plan made for its most batches, a few
    #                   at a time, stored as one experiment (default: nil: all)
    # :rerun :: with batch, run the batch's stored trials again too, each as the next attempt at its key
    #           (its earlier attempts kept as history): a batch runs whole on one host (default: false)
    # :queued :: the stored row (Store#experiment) of the experiment a fleet's worker runs a batch of:
    #            its trials go into that row, once this host's labels are proven to be the row's
    #            (StoredExperiment#claim) (default: nil: the row is found or made here)
    def initialize(source:, results_dir:, store: nil, resume: false, retry_failed: false, fail_fast: false, out: $stdout,
                   err: $stderr, installs: nil, layout: nil, ready_timeout_s: READY_TIMEOUT_S, stop_grace_s: 10, environment: nil,
                   parent_env: ENV, collaborators: {}, watchdog: Watchdog, machine: nil, detect: nil, labels: {},
                   host: Etc.uname[:nodename], batch: nil, through_batch: nil, rerun: false, queued: nil)
      @source = source
      @queued = queued
      @detect = detect
      @given_labels = labels
      @results_dir = File.expand_path(results_dir)
      @store = if store.respond_to?(:save_trial) then store
               elsif store.nil? || Store::Connection.scheme(store.to_s) == :directory then @results_dir
               else store
               end
      @resume = resume
      raise UsageError, "--retry-failed only works with --resume" if retry_failed && !resume

      @retry_failed = retry_failed
      @fail_fast = fail_fast
      @out = out
      @err = err
      @installs = installs
      @layout = layout || (source.respond_to?(:cpu_layout) ? source.cpu_layout : CpuLayout.detect)
      @ready_timeout_s = ready_timeout_s
      @stop_grace_s = stop_grace_s
      @environment = environment
      @machine = machine
      @parent_env = parent_env
      @collaborators = collaborators
      @watchdog = watchdog
      @host = host
      @batch = batch
      @through_batch = through_batch
      @rerun = rerun
    end

    # The resolved ruby variants, label => Rubies::Variant (ConfigError for
    # a ruby that does not exist, BuildError for one built from source that
    # does not build: before anything is stored). Rubies built from source
    # are built here, or taken from the cache.
    def variants
      @variants ||= begin
        Rubies.resolve_all(@source.ruby_specs, installs: @installs || Rubies.discover, out: @out, user: @results_dir)
      end
    end

    # What this run measured (Labels): the --label pairs and the git
    # revisions of the source's apps and rubies as they are now.
    def labels
      @labels ||= Labels.capture(given: @given_labels, source: @source, variants: variants)
    end


    # The fingerprint the experiment is stored under (StoredExperiment).
    def stored_fingerprint
      labels.fingerprint(@source.fingerprint)
    end

    # A fleet worker's proof, before it claims a batch of the experiment
    # stored as +row+, that it would run what the row names
    # (StoredExperiment#check!); raises SetupError.
    def check_queued!(row)
      StoredExperiment.new(source: @source, labels: labels, environment: nil, config_keys: nil).check!(row)
    end

    # The kind of trial that runs the source's configurations.
    def kind
      @kind ||= Trial.fetch(@source.trial_kind).new(context, **@collaborators)
    end

    # The plan, with what cannot run removed up front.
    def plan
      @plan ||= Experiment::Plan.new(
        @source, configurations: @source.configurations_for(variants),
                 unsupported: ->(config) { kind.unsupported_reason(config, variants.fetch(config.dims["ruby"])) }
      )
    end

    # Runs what is left of the experiment; returns a Summary. Raises
    # Interrupted after Ctrl-C (the current trial stopped, the run marked
    # interrupted) and UsageError when the store already holds this
    # experiment's trials and resume was not asked for, or when another
    # run holds the results directory.
    def run
      ResultsDir.check_writable!(@results_dir) # before minutes of ruby discovery
      ResultsDir.lock(@results_dir) { run_locked }
    end

    # `rackbench check`: examines, for each (ruby, server, app) of the plan,
    # its configuration with the most server threads (processes x threads;
    # the one most likely to run out of something), as its first trial
    # would run, measuring and storing nothing (Trial::Http#examine).
    # Yields each Trial::Http::Examination as it is done; returns them all.
    def examine
      raise UsageError, "check examines an experiment's servers; a #{@source.trial_kind} source has none" \
        unless kind.respond_to?(:examine)

      ResultsDir.check_writable!(@results_dir)
      ResultsDir.lock(@results_dir) do
        kind.check!
        with_watchdog do
          trials = examined_trials
          kind.prepare(trials)
          kind.around_run do
            trials.map { |trial| kind.examine(trial).tap { |examination| yield examination if block_given? } }
          end
        end
      end
    end

    # The long work (Runner::Preparation) done before the first of +trials+
    # (default: the plan's): Passenger's agent, when it is not compiled yet.
    def preparation(trials = plan.trials)
      Preparation.new(trials, variants)
    end

    # The plan for --dry-run: the trials in order, then what is done before
    # the first.
    def plan_listing
      texts = preparation.texts
      texts.empty? ? plan.to_s : "#{plan}\n#{texts.map { |text| "Before the first trial: #{text}\n" }.join}"
    end

    # The trials `examine` boots: one per (ruby, server, app), in plan order.
    def examined_trials
      first_batch = plan.trials.select { |trial| trial.batch == 1 && !trial.profiled? }
      first_batch.group_by { |trial| trial.config.dims.values_at("ruby", "server", "app") }
                 .map { |_, trials| trials.max_by { |trial| [trial.config.server_threads, -trial.index] } }
                 .sort_by(&:index)
    end

    private

    def context
      Trial::Context.new(source: @source, variants: variants, layout: @layout, results_dir: @results_dir, out: @out,
                         ready_timeout_s: @ready_timeout_s, stop_grace_s: @stop_grace_s, parent_env: @parent_env)
    end

    def run_locked
      kind.check!
      plan # resolve rubies and what can run before touching the store
      labels # the revisions as the run starts
      check_detect
      environment = @environment ||
                    (@machine && Runner.with_run_parts(@machine, variants: variants, layout: @layout)) ||
                    Runner.capture_environment(err: @err, variants: variants, layout: @layout)
      environment = environment.merge("detect" => @detect.to_h) if @detect
      # What the kind keeps for the run (its services) starts inside the
      # watchdog's watch and before the store is touched: a service that
      # cannot start stops the run with nothing stored.
      with_watchdog { kind.around_run { store_and_run(environment) } }
    end

    # An earlier runner of this directory that died (kill -9) may have left
    # processes behind that its own watchdog could not stop: stop them
    # before measuring next to them. Then watch this run the same way, and
    # say what its watchdog had to stop at the end: every trial stops its
    # own server and every run its own services, so a process still marked
    # then is one a stop missed (and the trials after it ran beside it).
    def with_watchdog
      left = @watchdog.sweep(results_dir: @results_dir, grace_s: @stop_grace_s)
      stopped = left[:termed] + left[:killed]
      @err.puts "rackbench: stopped #{stopped} process(es) an earlier run of #{@results_dir} left behind" if stopped.positive?
      watchdog = @watchdog.start(results_dir: @results_dir, grace_s: @stop_grace_s)
      begin
        yield
      ensure
        warn_left_running(watchdog.stop)
      end
    end

    # One line when the run's watchdog stopped processes at its end
    # (+counts+: Watchdog#stop's).
    def warn_left_running(counts)
      return unless counts

      stopped = counts[:termed] + counts[:killed]
      return unless stopped.positive? || counts[:survivors].positive?

      @err.puts "rackbench: warning: #{stopped} process(es) of the run were still running after its last stop, " \
                "stopped by its watchdog (#{counts[:killed]} with KILL)" \
                "#{"; #{counts[:survivors]} survived KILL" if counts[:survivors].positive?}"
    end

    # The store is opened here, unless the runner was given an open one (a
    # fleet worker's, which checks its claim with every trial it stores).
    def open_store(&block)
      @store.respond_to?(:save_trial) ? yield(@store) : Store.open(@store, &block)
    end

    def store_and_run(environment)
      open_store do |store|
        stored = StoredExperiment.new(source: @source, labels: labels, environment: environment,
                                      config_keys: @source.configurations_for(variants).map(&:key))
        experiment_id = @queued ? stored.claim(store, @queued) : stored.find_or_create(store)
        done = store.finished_keys(experiment_id)
        refuse_rerun(done, store) unless done.empty? || @resume
        warn_other_labels(store, experiment_id) if @resume && done.empty?
        retries = @retry_failed ? store.failed_attempts(experiment_id) : {}
        retries = store.stored_attempts(experiment_id, batch_trials.map(&:key)) if @rerun
        estimate = Estimate.new(plan_note: @source.estimate_note)
        # A resumed run knows the boots and stops of the trials already stored.
        store.trials(experiment_id, result: false).each { |record| estimate.learn(record) } unless done.empty?
        run_remaining(store, experiment_id, done, retries, environment, estimate)
      end
    end

    def refuse_rerun(done, store)
      where = @store == @results_dir ? @results_dir : store.location
      what = labels.empty? ? "" : " (#{labels.text})"
      raise UsageError, "#{where} already holds #{done.size} trials of experiment '#{@source.name}'#{what}: " \
                        "add --resume to finish it, --label KEY=VALUE to run it again as another labelled run, " \
                        "or choose another --results directory"
    end

    # --resume found nothing of this experiment under these labels: when
    # the store holds runs of it under others (the app moved to another
    # commit since the interrupted run), say so, since this starts afresh.
    def warn_other_labels(store, experiment_id)
      others = store.experiments.select { |e| e[:name] == @source.name && e[:id] != experiment_id }
      return if others.empty?

      stored = Labels.from_h(others.last[:labels])
      @err.puts "rackbench: nothing of '#{@source.name}' is stored with these labels and revisions " \
                "(#{labels.empty? ? "none" : labels.text}); the latest stored run has " \
                "#{stored.empty? ? "none" : stored.text}: starting a new run"
    end

    # retries :: key => stored failed attempt, for the failures to run
    # again (--retry-failed): they rejoin the remaining trials in the
    # plan's order, with their own batch and position.
    def run_remaining(store, experiment_id, done, retries, environment, estimate)
      remaining = plan.remaining(done - retries.keys)
      remaining = remaining.select { |trial| trial.batch == @batch } if @batch
      remaining = remaining.select { |trial| trial.batch <= @through_batch } if @through_batch
      retries = retries.slice(*remaining.map(&:key)) # failures of trials the plan no longer has stay as they are
      announce(done, remaining, retries, estimate.remaining(remaining), preparation(remaining))
      # What every remaining trial needs (their gems) is made ready first:
      # a problem with it stops the run here, before any trial.
      kind.prepare(remaining)
      stopping = @detect && Detect::Stopping.new(settings: @detect, store: store, experiment_id: experiment_id,
                                                 plan: plan, out: @out)
      TrialLoop.new(store: store, experiment_id: experiment_id, plan: plan, remaining: remaining,
                    resumed: !done.empty?, out: @out, describe: method(:describe), estimate: estimate,
                    fail_fast: @fail_fast, environment: environment, retries: retries, stopping: stopping,
                    host: @host)
               .run { |trial| kind.run(trial) }
    end

    # The plan's trials of the batch the runner is limited to.
    def batch_trials
      plan.trials.select { |trial| trial.batch == @batch }
    end

    # --detect compares configurations, over a plan made for its most batches.
    def check_detect
      return unless @detect

      if @source.batches != @detect.max_batches
        raise UsageError, "--detect plans #{@detect.max_batches} batches (--max-batches), the experiment #{@source.batches}"
      end
      count = plan.trials.map { |trial| trial.config.key }.uniq.size
      raise UsageError, "--detect compares configurations; this experiment runs #{count}" if count < 2
    end

    # The run's first lines: its trials, their estimate with what is built
    # first (+preparation+: Passenger's agent), and where results go.
    def announce(done, remaining, retries, guess, preparation)
      stored = done.size - retries.size
      first = preparation.empty? ? "" : ", #{Experiment::Plan.format_duration(preparation.estimate_s)} of it built first"
      @out.puts "Experiment #{@source.name}: #{plan.size} trials" \
                "#{", #{stored} already stored" unless stored.zero?}" \
                "#{", #{retries.size} failed to retry" unless retries.empty?}, #{remaining.size} to run " \
                "(about #{Experiment::Plan.format_duration(guess.seconds + preparation.estimate_s)}#{first}" \
                "#{", #{"trials " unless preparation.empty?}#{guess.note}" if guess.note}); results in #{@results_dir}"
      preparation.texts.each { |text| @out.puts "  first: #{text}" }
      @out.puts "  labels: #{labels.text}" unless labels.empty?
      plan.skipped.each { |s| @out.puts "  skipped: #{s.config} (#{s.reason})" }
      @out.puts "  #{@detect.describe}" if @detect
      kind.announce.each { |line| @out.puts "  #{line}" }
    end

    # The result part of a trial's progress line.
    def describe(record)
      return record.reading.summary(record) if record.ok?

      # The stored reason may end with the server log's tail: one line here.
      first, *rest = record.reason.to_s.lines.map(&:strip).reject(&:empty?)
      "FAILED: #{first}#{" (see #{record.log_path})" if rest.any? && record.log_path}"
    end
  end
end
