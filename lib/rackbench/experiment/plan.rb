# frozen_string_literal: true

require "set"

module Rackbench
  class Experiment
    # The trials of a run in the order they run: every configuration once
    # per batch, batch by batch, the configurations of each batch shuffled
    # with a generator seeded by the seed and the batch number. Every kind
    # of trial is planned here, an HTTP experiment's and a micro-benchmark's
    # alike: the seeded shuffle is the core of the method, written once.
    #
    # Why this order: a machine drifts (thermal throttling, a background job,
    # page cache, another tenant). Run in matrix order, all of one server's
    # trials would share whatever the machine was doing at that time, and the
    # drift would read as a difference between servers. Shuffled within each
    # batch, drift spreads over every configuration; batch by batch, each
    # batch is a complete replicate, so an interrupted run still holds whole
    # comparisons. Seeded, so the same experiment runs in the same order every
    # time (and a resumed run continues the same order).
    #
    # Configurations that cannot run (a server adapter's limits, a ruby
    # without fork) are removed up front and listed in #skipped, so the plan
    # says so before the run, not mid-run.
    class Plan
      include Enumerable

      # One run of one configuration. +key+ identifies it across runs:
      # "<config key>#batch=<n>", "<config key>#batch=<n>#profile" for a
      # profiled trial and "<config key>#batch=<n>#instructions" for an
      # instructions trial. +index+ is its 1-based position in the plan.
      # +profile+ is the profiler's Profile::Settings for a profiled trial,
      # nil for a plain one. +measure+ is what it measures
      # (Instructions::TIME or Instructions::INSTRUCTIONS: under valgrind).
      Trial = Struct.new(:config, :batch, :key, :index, :profile, :measure, keyword_init: true) do
        def profiled?
          !profile.nil?
        end

        def instructions?
          measure == Instructions::INSTRUCTIONS
        end

        # Its configuration's estimate; under valgrind, the window takes
        # INSTRUCTIONS_SLOWDOWN times longer (a guess the run's own trials
        # correct: Runner::Estimate).
        def estimated_s
          seconds = config.estimated_s
          instructions? ? seconds * INSTRUCTIONS_SLOWDOWN : seconds
        end
      end

      # What ends the key of a profiled trial, and of an instructions trial.
      PROFILE_KEY_SUFFIX = "#profile"
      INSTRUCTIONS_KEY_SUFFIX = "#instructions"
      # How much longer than natively a trial takes under valgrind, before
      # any was measured: callgrind's instrumentation runs Ruby servers
      # 5 to 20 times slower here (doc/performance.md).
      INSTRUCTIONS_SLOWDOWN = 10

      # A configuration left out of the plan, with the +reason+.
      Skipped = Struct.new(:config, :reason, keyword_init: true)

      # What the plan needs of where its configurations come from (an
      # Experiment, a Micro::Settings): name, seed, batches, excluded_count
      # (configurations its file excluded) and estimate_note (how a trial's
      # time is estimated), for the listing.
      attr_reader :source
      # Array of Trial, in run order.
      attr_reader :trials
      # Array of Skipped, in the source's order.
      attr_reader :skipped

      # +source+ :: see #source
      # :configurations :: the configurations to plan, each with #key, #dims,
      #                    #to_s and #estimated_s (default: source.configurations)
      # :unsupported :: callable taking a configuration and returning nil when
      #                 it can run, else a reason (String) why it cannot, e.g.
      #                 "WEBrick runs a single process" (default: all can)
      def initialize(source, configurations: source.configurations, unsupported: nil)
        @source = source
        reasons = configurations.to_h { |config| [config.key, unsupported&.call(config)] }
        @skipped = configurations.select { |c| reasons[c.key] }
                                 .map { |c| Skipped.new(config: c, reason: reason_text(reasons[c.key])).freeze }.freeze
        @trials = order(configurations, reasons).freeze
        freeze
      end

      def each(&block)
        trials.each(&block)
      end

      def size
        trials.size
      end

      def empty?
        trials.empty?
      end

      # The trials whose key is not in +done_keys+ (keys of finished trials,
      # e.g. from the store), in plan order: what a resumed run still runs.
      def remaining(done_keys)
        done = done_keys.to_set
        trials.reject { |trial| done.include?(trial.key) }
      end

      # Estimated wall time of +trials+ in seconds: each configuration's own
      # estimate (an HTTP trial: warmup + duration + about 3 s to boot and
      # stop the server).
      def estimated_s(trials = self.trials)
        trials.sum(&:estimated_s)
      end

      # The plan for a human (--dry-run): the trials in order, then what was
      # skipped and why, and the estimated total time.
      def to_s
        lines = [header, ""]
        width = trials.size.to_s.size
        trials.each do |t|
          mark = if t.profiled? then "  (profiled)"
                 elsif t.instructions? then "  (instructions)"
                 end
          lines << "  #{t.index.to_s.rjust(width)}. batch #{t.batch}  #{t.config}#{mark}"
        end
        lines << "  (no trials)" if trials.empty?
        unless skipped.empty?
          lines << "" << "Skipped, not supported (#{count(skipped.size, "configuration")}):"
          skipped.each { |s| lines << "  - #{s.config}: #{s.reason}" }
        end
        excluded = source.excluded_count
        lines << "" << "Excluded by the experiment file: #{count(excluded, "configuration")}." if excluded.positive?
        "#{lines.join("\n")}\n"
      end

      # "45s", "3m 05s", "1h 02m".
      def self.format_duration(seconds)
        total = seconds.round
        hours, rest = total.divmod(3600)
        minutes, secs = rest.divmod(60)
        return format("%dh %02dm", hours, minutes) if hours.positive?
        return format("%dm %02ds", minutes, secs) if minutes.positive?

        "#{secs}s"
      end

      private

      # Shuffles every configuration (supported or not) and then drops the
      # unsupported ones, so that which configurations can run does not
      # change the order of the others. The base order is by key, not by the
      # file's list order, so the same fingerprint always gives the same plan.
      #
      # A profiled experiment adds one profiled trial per configuration to
      # each of its first profile.trials batches, shuffled in with the plain
      # ones (the same seeded shuffle), so that drift spreads over them too
      # and an interrupted run has profiles of its first batches. The plain
      # trials' order is that of the experiment without profiling.
      def order(configurations, reasons)
        base = configurations.sort_by(&:key)
        trials = (1..source.batches).flat_map do |batch|
          plain = base.shuffle(random: Random.new(source.seed + batch)).map { |config| [config, batch, nil, plain_measure] }
          planned = insert_instructions(plain, base, batch)
          planned = insert_profiled(planned, base, batch)
          planned = planned.reject { |_, _, profile, _| profile.nil? } if profile_only?
          planned.reject { |config, _, _, _| reasons[config.key] }
        end
        trials.each_with_index.map do |(config, batch, profile, measure), i|
          suffix = if profile then PROFILE_KEY_SUFFIX
                   elsif measure == Instructions::INSTRUCTIONS then INSTRUCTIONS_KEY_SUFFIX
                   end
          key = "#{config.key}#batch=#{batch}#{suffix}".freeze
          Trial.new(config: config, batch: batch, key: key, index: i + 1, profile: profile, measure: measure).freeze
        end
      end

      # What the source's measures are (`measure:`; a source without the
      # key measures time).
      def measures
        source.respond_to?(:measure) ? source.measure : [Instructions::TIME]
      end

      # The plain trials' measure: instructions when it is the only one.
      def plain_measure
        measures == [Instructions::INSTRUCTIONS] ? Instructions::INSTRUCTIONS : Instructions::TIME
      end

      # Measuring both, the batch's time trials with an instructions trial
      # of each configuration at a seeded place (a generator of its own, so
      # that the time trials keep the order they have without it), as
      # profiled trials are placed.
      def insert_instructions(plain, base, batch)
        return plain unless measures.size > 1

        random = Random.new(source.seed + batch + INSTRUCTIONS_SEED_OFFSET)
        base.shuffle(random: random).each_with_object(plain.dup) do |config, trials|
          trials.insert(random.rand(trials.size + 1), [config, batch, nil, Instructions::INSTRUCTIONS])
        end
      end

      # The batch's plain trials with a profiled trial of each configuration
      # at a seeded place (a generator of its own, so that the plain
      # trials keep the order they have without profiling).
      def insert_profiled(plain, base, batch)
        profile = source.respond_to?(:profile) ? source.profile : nil
        return plain if profile.nil? || batch > profile.trials

        random = Random.new(source.seed + batch + PROFILE_SEED_OFFSET)
        base.shuffle(random: random).each_with_object(plain.dup) do |config, trials|
          trials.insert(random.rand(trials.size + 1), [config, batch, profile, Instructions::TIME])
        end
      end

      # Only the profiled trials (`rackbench profile`): the plain ones are
      # left out after the shuffle, so the profiled keep their places.
      def profile_only?
        source.respond_to?(:profile_only) && source.profile_only
      end

      # Keeps the profiled trials' and the instructions trials' generators
      # apart from any batch's.
      PROFILE_SEED_OFFSET = 1 << 32
      INSTRUCTIONS_SEED_OFFSET = 1 << 33

      def reason_text(reason)
        text = reason.to_s
        (text.empty? ? "not supported" : text).dup.freeze
      end

      def header
        batches = count(source.batches, "batch", "batches")
        "Plan for #{source.name} (seed #{source.seed}, #{batches}): #{count(trials.size, "trial")}, " \
          "estimated #{self.class.format_duration(estimated_s)} (#{source.estimate_note})"
      end

      def count(number, singular, plural = "#{singular}s")
        "#{number} #{number == 1 ? singular : plural}"
      end
    end
  end
end
