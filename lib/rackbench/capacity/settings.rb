# frozen_string_literal: true

module Rackbench
  module Capacity
    # The +capacity:+ section of an experiment file (doc/experiment.md,
    # "capacity"): the latency target a step must hold, the error ratio it
    # may have, where the search starts and stops, how finely it resolves
    # the answer, each step's duration and warmup, and the confirmation
    # runs at the answer. Frozen; every mistake raises ConfigError naming
    # the key (capacity.KEY).
    #
    #   capacity:
    #     p99: 50ms            # the target: exactly one of p50 p90 p95 p99 p999
    #     max_errors: 0.1%     # failed requests / attempts a step may have
    #     start_rate: 100      # req/s of the first step
    #     max_rate: 20000      # req/s the search never asks beyond
    #     resolution: 5%       # or req/s: 20
    #     duration: 2s         # of each step (default: load.duration)
    #     warmup: 1s           # of each step (default: load.warmup)
    #     confirmations: 2     # runs at the answer that must pass too
    class Settings
      PERCENTILES = { "p50" => 50.0, "p90" => 90.0, "p95" => 95.0, "p99" => 99.0, "p999" => 99.9 }.freeze
      KEYS = (PERCENTILES.keys + %w[max_errors start_rate max_rate resolution ramp duration warmup
                                    confirmations]).freeze
      DEFAULTS = { "max_errors" => 0.001, "start_rate" => 100.0, "max_rate" => 100_000.0,
                   "resolution" => "5%", "ramp" => 2.0, "confirmations" => 2 }.freeze
      PERCENT = /\A(\d+(?:\.\d+)?)\s*%\z/

      # The target's percentile key ("p99") and value (99.0).
      attr_reader :percentile_key, :percentile
      # The latency the percentile must stay at or under, in microseconds.
      attr_reader :target_us
      # Failed requests (transport errors and statuses other than 2xx/3xx)
      # over attempts a passing step may have (0.001: 0.1%).
      attr_reader :max_error_ratio
      # The first step's rate, and the highest rate asked, in req/s.
      attr_reader :start_rate, :max_rate
      # How close the last pass and the first fail must be: a fraction of
      # the pass (resolution_ratio, e.g. 0.05) or req/s (resolution_rps);
      # one of them is nil.
      attr_reader :resolution_ratio, :resolution_rps
      # What the ramp multiplies the rate by after each pass (2.0).
      attr_reader :ramp
      # Each step's measured window and warmup in seconds; nil: the file's
      # load.duration and load.warmup.
      attr_reader :duration_s, :warmup_s
      # Runs at the answer that must pass as well (0: none).
      attr_reader :confirmations

      # Parses the section +value+ (a Hash from the YAML) with +checker+
      # (Experiment::Checker).
      def self.parse(value, checker)
        checker.keys!(value, KEYS, "capacity")
        given = PERCENTILES.keys.select { |k| value.key?(k) }
        if given.size != 1
          checker.fail!("capacity", "needs exactly one latency target, one of #{PERCENTILES.keys.join(", ")} " \
                                    "(e.g. p99: 50ms), got #{given.empty? ? "none" : given.join(", ")}")
        end
        v = DEFAULTS.merge(value)
        key = given.first
        new(percentile_key: key,
            target_us: checker.duration!(v[key], "capacity.#{key}", positive: true) * 1e6,
            max_error_ratio: fraction(v["max_errors"], "capacity.max_errors", checker),
            start_rate: rate(v["start_rate"], "capacity.start_rate", checker),
            max_rate: rate(v["max_rate"], "capacity.max_rate", checker),
            resolution: resolution(v["resolution"], checker),
            ramp: ramp(v["ramp"], checker),
            duration_s: v.key?("duration") ? checker.duration!(v["duration"], "capacity.duration", positive: true) : nil,
            warmup_s: v.key?("warmup") ? checker.duration!(v["warmup"], "capacity.warmup") : nil,
            confirmations: checker.integer!(v["confirmations"], "capacity.confirmations", min: 0, max: 10))
          .tap { |s| s.check_rates!(checker) }
      end

      def initialize(percentile_key:, target_us:, max_error_ratio:, start_rate:, max_rate:, resolution:, ramp:,
                     duration_s:, warmup_s:, confirmations:)
        @percentile_key = percentile_key
        @percentile = PERCENTILES.fetch(percentile_key)
        @target_us = target_us.to_f
        @max_error_ratio = max_error_ratio
        @start_rate = start_rate
        @max_rate = max_rate
        @resolution_ratio, @resolution_rps = resolution
        @ramp = ramp
        @duration_s = duration_s
        @warmup_s = warmup_s
        @confirmations = confirmations
        freeze
      end

      # Raises ConfigError when start_rate is above max_rate.
      def check_rates!(checker)
        return if start_rate <= max_rate

        checker.fail!("capacity.start_rate", "#{start_rate} is above capacity.max_rate #{max_rate}")
      end

      # "p99 <= 50ms", for tables and charts.
      def target_text
        "#{percentile_key} <= #{Units.latency_us(target_us)}"
      end

      # "5%" or "20 req/s".
      def resolution_text
        resolution_ratio ? Units.percent_trimmed(resolution_ratio) : "#{Units.rate_rounded(resolution_rps)} req/s"
      end

      # The resolution in req/s at +rate+.
      def resolution_at(rate)
        resolution_ratio ? rate * resolution_ratio : resolution_rps
      end

      # The section as plain data, for the fingerprint and the JSON output.
      def to_h
        { "percentile" => percentile_key, "target_us" => target_us, "max_error_ratio" => max_error_ratio,
          "start_rate" => start_rate, "max_rate" => max_rate, "resolution_ratio" => resolution_ratio,
          "resolution_rps" => resolution_rps, "ramp" => ramp, "duration_s" => duration_s, "warmup_s" => warmup_s,
          "confirmations" => confirmations }
      end

      class << self
        private

        # 0.1% or 0.001: a fraction in [0, 1).
        def fraction(value, key, checker)
          number = percent_or_number(value)
          ok = number&.finite? && number >= 0 && number < 1
          checker.fail!(key, "must be a fraction such as 0.1% or 0.001 (at least 0, under 1), got #{value.inspect}") unless ok
          number
        end

        def rate(value, key, checker)
          ok = value.is_a?(Numeric) && value.to_f.finite? && value >= 1
          checker.fail!(key, "must be requests/s of at least 1, got #{value.inspect}") unless ok
          value.to_f
        end

        # "5%" (of the last pass) or a number of req/s: [ratio, nil] or [nil, rps].
        def resolution(value, checker)
          if value.is_a?(String) && (match = PERCENT.match(value.strip))
            ratio = match[1].to_f / 100
            return [ratio, nil] if ratio.positive? && ratio <= 0.5

            checker.fail!("capacity.resolution", "must be over 0% and at most 50%, got #{value.inspect}")
          end
          return [nil, value.to_f] if value.is_a?(Numeric) && value.to_f.finite? && value.positive?

          checker.fail!("capacity.resolution", "must be a percentage such as 5% or req/s such as 20, got #{value.inspect}")
        end

        def ramp(value, checker)
          ok = value.is_a?(Numeric) && value.to_f.finite? && value > 1 && value <= 10
          checker.fail!("capacity.ramp", "must be a factor over 1 and at most 10, got #{value.inspect}") unless ok
          value.to_f
        end

        def percent_or_number(value)
          if value.is_a?(String) && (match = PERCENT.match(value.strip))
            match[1].to_f / 100
          elsif value.is_a?(Numeric)
            value.to_f
          end
        end
      end
    end
  end
end
