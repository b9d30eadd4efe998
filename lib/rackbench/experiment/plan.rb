# frozen_string_literal: true

require "set"

module Rackbench
  # The trials of an experiment in the order they run: every configuration
  # once per batch, batch by batch, the configurations of each batch
  # shuffled with a generator seeded by the experiment's seed and the batch
  # number.
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
  # Configurations a server adapter cannot run are removed up front and
  # listed in #skipped, so the plan says so before the run, not mid-run.
  class Plan
    include Enumerable

    # One run of one configuration. +key+ identifies it across runs:
    # "<config key>#batch=<n>". +index+ is its 1-based position in the plan.
    Trial = Struct.new(:config, :batch, :key, :index, keyword_init: true)

    # A configuration left out of the plan, with the adapter's +reason+.
    Skipped = Struct.new(:config, :reason, keyword_init: true)

    # Booting, probing and stopping a server, per trial, for the estimate.
    OVERHEAD_S = 3.0

    attr_reader :experiment
    # Array of Trial, in run order.
    attr_reader :trials
    # Array of Skipped, in matrix order.
    attr_reader :skipped

    # +experiment+ :: an Experiment
    # :unsupported :: callable taking a Config and returning nil when the
    #                 configuration can run, else a reason (String) why it
    #                 cannot, e.g. "WEBrick runs a single process"
    #                 (default: every configuration is supported)
    def initialize(experiment, unsupported: nil)
      @experiment = experiment
      reasons = experiment.configurations.to_h { |config| [config.key, unsupported&.call(config)] }
      @skipped = experiment.configurations.select { |c| reasons[c.key] }
                           .map { |c| Skipped.new(config: c, reason: reason_text(reasons[c.key])).freeze }.freeze
      @trials = order(reasons).freeze
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

    # Estimated wall time of +trials+ in seconds: warmup + duration +
    # OVERHEAD_S each.
    def estimated_s(trials = self.trials)
      trials.sum { |trial| trial.config.load[:warmup_s] + trial.config.load[:duration_s] + OVERHEAD_S }
    end

    # The plan for a human (--dry-run): the trials in order, then what was
    # skipped and why, and the estimated total time.
    def to_s
      lines = [header, ""]
      width = trials.size.to_s.size
      trials.each { |t| lines << "  #{t.index.to_s.rjust(width)}. batch #{t.batch}  #{t.config}" }
      lines << "  (no trials)" if trials.empty?
      unless skipped.empty?
        lines << "" << "Skipped, not supported by the server (#{count(skipped.size, "configuration")}):"
        skipped.each { |s| lines << "  - #{s.config}: #{s.reason}" }
      end
      excluded = experiment.dimensions.values.map(&:size).reduce(1, :*) - experiment.configurations.size
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
    # unsupported ones, so that which adapters can run what does not change
    # the order of the others. The base order is by key, not by the file's
    # list order, so the same fingerprint always gives the same plan.
    def order(reasons)
      base = experiment.configurations.sort_by(&:key)
      trials = (1..experiment.batches).flat_map do |batch|
        base.shuffle(random: Random.new(experiment.seed + batch))
            .reject { |config| reasons[config.key] }
            .map { |config| [config, batch] }
      end
      trials.each_with_index.map do |(config, batch), i|
        Trial.new(config: config, batch: batch, key: "#{config.key}#batch=#{batch}".freeze, index: i + 1).freeze
      end
    end

    def reason_text(reason)
      text = reason.to_s
      (text.empty? ? "not supported" : text).dup.freeze
    end

    def header
      batches = count(experiment.batches, "batch", "batches")
      "Plan for #{experiment.name} (seed #{experiment.seed}, #{batches}): #{count(trials.size, "trial")}, " \
        "estimated #{self.class.format_duration(estimated_s)} " \
        "(warmup + duration + ~#{OVERHEAD_S.round}s per trial)"
    end

    def count(number, singular, plural = "#{singular}s")
      "#{number} #{number == 1 ? singular : plural}"
    end
  end
end
