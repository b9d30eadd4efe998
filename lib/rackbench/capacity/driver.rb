# frozen_string_literal: true

module Rackbench
  module Capacity
    # Runs the capacity searches of an experiment (one per configuration
    # and batch), each step an ordinary stored experiment derived from the
    # file (Experiment#derive) and run by +steps+ (Runner::Steps). A step
    # already stored runs nothing and gives back its stored trial, so
    # running the same searches again replays every decision from the store
    # and continues where an interrupted search stopped: the steps' names,
    # settings and seeds follow from the decisions alone.
    #
    # Order (doc/methodology.md, "Capacity search"): batch by batch; within
    # a batch, the configurations' searches are shuffled with the batch's
    # seed and advance one step each in turn, so that a drift of the
    # machine spreads over every configuration, as the plan of an ordinary
    # run spreads it.
    class Driver
      # One search: its configuration, batch and its number among the
      # configurations (1-based, in the file's order: the step names use it).
      Job = Struct.new(:config, :config_number, :batch, :seed, :search, keyword_init: true)
      # A request this many times slower than the target already failed;
      # the timeout only bounds the wait (used when load.timeout is auto:
      # a calibration per step would boot a second server for every step).
      TIMEOUT_TARGETS = 10
      MIN_TIMEOUT_S = 2.0

      attr_reader :experiment, :settings

      # experiment :: an Experiment with a capacity section
      # :steps :: runs a derived experiment and returns its Outcome (#run), and
      #           finds a stored one (#stored): Runner::Steps
      # :on_step :: called with (job, Search::Step) after every step (progress)
      # :parse_options :: for Experiment#derive (known_servers:, known_apps:)
      def initialize(experiment, steps:, on_step: nil, parse_options: {})
        @experiment = experiment
        @settings = experiment.capacity or raise ArgumentError, "#{experiment.name} has no capacity section"
        @steps = steps
        @on_step = on_step
        @parse_options = parse_options
      end

      # Every search, in the order their first steps run.
      def jobs
        @jobs ||= (1..experiment.batches).flat_map do |batch|
          seed = self.class.batch_seed(experiment.seed, batch)
          numbered = experiment.configurations.each_with_index.map { |config, i| [config, i + 1] }
          numbered.shuffle(random: Random.new(seed)).map do |config, number|
            Job.new(config: config, config_number: number, batch: batch, seed: seed, search: Search.new(settings))
          end
        end
      end

      # Each batch's searches run with their own seed, a function of the
      # experiment's seed and the batch.
      def self.batch_seed(seed, batch)
        seed * 1000 + batch
      end

      # Runs (or replays) every search; returns the jobs, each search done.
      def run
        jobs.group_by(&:batch).each_value do |batch_jobs|
          active = batch_jobs.dup
          until active.empty?
            active.each { |job| advance(job) }
            active.reject! { |job| job.search.done? }
          end
        end
        jobs
      end

      # The experiment the next step of +job+ runs (its name says which
      # configuration, batch, step and rate).
      def step_experiment(job, ask = job.search.next_ask)
        # A broadcast search's steps are numbers of clients (n), a rate's
        # are req/s (r).
        name = format("%s.capacity.c%d.b%d.s%02d.%s%d", experiment.name, job.config_number, job.batch, ask.index,
                      settings.broadcast? ? "n" : "r", ask.rate)
        experiment.derive(name: name, only: job.config, changes: changes(job, ask), **@parse_options)
      end

      # Whether the store holds a step of these searches already.
      def started?
        !@steps.stored(step_experiment(jobs.first)).nil?
      end

      private

      def advance(job)
        ask = job.search.next_ask
        outcome = @steps.run(step_experiment(job, ask))
        record = outcome.records.last
        verdict = if settings.broadcast?
                    BroadcastJudge.call(settings: settings, clients: ask.rate, ok: record&.ok?, reason: record&.reason,
                                        result: record&.result)
                  else
                    Judge.call(settings: settings, rate: ask.rate, ok: record&.ok?, reason: record&.reason,
                               result: record&.result, connections: job.config.load[:connections])
                  end
        job.search.record(verdict)
        @on_step&.call(job, job.search.steps.last)
      end

      def changes(job, ask)
        load = job.config.load
        changes = { "capacity" => nil, "batches" => 1, "seed" => job.seed,
                    (settings.broadcast? ? "load.clients" : "load.rate") => ask.rate }
        changes["load.duration"] = settings.duration_s if settings.duration_s
        changes["load.warmup"] = settings.warmup_s if settings.warmup_s
        # (A WebSocket run's timeout is no calibration's: Trial::Ws.)
        changes["load.timeout"] = timeout_s if load[:timeout_s].nil? && !settings.broadcast?
        changes
      end

      def timeout_s
        [MIN_TIMEOUT_S, TIMEOUT_TARGETS * settings.target_us / 1e6].max
      end
    end
  end
end
