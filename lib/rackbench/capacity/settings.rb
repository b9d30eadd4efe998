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
    #
    # For a broadcast workload (load.workload broadcast) the search is over
    # the number of subscribed clients, not a rate: the most clients whose
    # broadcasts' round trip holds the target (doc/websockets.md):
    #
    #   capacity:
    #     p95: 200ms           # a broadcast's round trip, send to last receipt
    #     min_delivery: 99.9%  # receipts over receipts due a step must reach
    #     start_clients: 250   # the first step's clients
    #     max_clients: 10000   # the most asked
    #     resolution: 10%      # or clients: 100
    class Settings
      PERCENTILES = { "p50" => 50.0, "p90" => 90.0, "p95" => 95.0, "p99" => 99.0, "p999" => 99.9 }.freeze
      KEYS = (PERCENTILES.keys + %w[max_errors start_rate max_rate resolution ramp duration warmup
                                    confirmations]).freeze
      # A broadcast search's keys in place of the rates.
      BROADCAST_KEYS = (KEYS - %w[start_rate max_rate] + %w[start_clients max_clients min_delivery]).freeze
      BROADCAST_DEFAULTS = { "start_clients" => 250, "max_clients" => 10_000, "min_delivery" => 0.999 }.freeze
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

      # What the search steps: "req/s" (a rate, open loop), or "clients"
      # (a broadcast's subscribed clients).
      attr_reader :unit
      # A broadcast search: the share of receipts due that a passing step
      # must reach (nil for a rate's search).
      attr_reader :min_delivery_ratio

      # Parses the section +value+ (a Hash from the YAML) with +checker+
      # (Experiment::Checker). :broadcast :: the experiment's workload is a
      # WebSocket broadcast: the search is over clients (default: false).
      def self.parse(value, checker, broadcast: false)
        checker.keys!(value, broadcast ? BROADCAST_KEYS : KEYS, "capacity")
        given = PERCENTILES.keys.select { |k| value.key?(k) }
        if given.size != 1
          checker.fail!("capacity", "needs exactly one latency target, one of #{PERCENTILES.keys.join(", ")} " \
                                    "(e.g. p99: 50ms), got #{given.empty? ? "none" : given.join(", ")}")
        end
        v = DEFAULTS.merge(broadcast ? BROADCAST_DEFAULTS : {}).merge(value)
        key = given.first
        start, max = broadcast ? %w[start_clients max_clients] : %w[start_rate max_rate]
        new(percentile_key: key,
            target_us: checker.duration!(v[key], "capacity.#{key}", positive: true) * 1e6,
            max_error_ratio: fraction(v["max_errors"], "capacity.max_errors", checker),
            start_rate: broadcast ? clients(v[start], "capacity.#{start}", checker) : rate(v[start], "capacity.#{start}", checker),
            max_rate: broadcast ? clients(v[max], "capacity.#{max}", checker) : rate(v[max], "capacity.#{max}", checker),
            unit: broadcast ? "clients" : "req/s",
            min_delivery_ratio: broadcast ? delivery(v["min_delivery"], checker) : nil,
            resolution: resolution(v["resolution"], checker),
            ramp: ramp(v["ramp"], checker),
            duration_s: v.key?("duration") ? checker.duration!(v["duration"], "capacity.duration", positive: true) : nil,
            warmup_s: v.key?("warmup") ? checker.duration!(v["warmup"], "capacity.warmup") : nil,
            confirmations: checker.integer!(v["confirmations"], "capacity.confirmations", min: 0, max: 10))
          .tap { |s| s.check_rates!(checker) }
      end

      def initialize(percentile_key:, target_us:, max_error_ratio:, start_rate:, max_rate:, resolution:, ramp:,
                     duration_s:, warmup_s:, confirmations:, unit: "req/s", min_delivery_ratio: nil)
        @unit = unit
        @min_delivery_ratio = min_delivery_ratio
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

        return checker.fail!("capacity.start_rate", "#{start_rate} is above capacity.max_rate #{max_rate}") unless broadcast?

        checker.fail!("capacity.start_clients", "#{start_rate.round} is above capacity.max_clients #{max_rate.round}")
      end

      # Whether the search is over a broadcast's clients.
      def broadcast? = unit == "clients"

      # "p99 <= 50ms", for tables and charts ("broadcast p95 <= 200ms,
      # delivery >= 99.9%" for clients).
      def target_text
        text = "#{percentile_key} <= #{Units.latency_us(target_us)}"
        return text unless broadcast?

        "broadcast #{text}, delivery >= #{Units.percent_trimmed(min_delivery_ratio, digits: 2)}"
      end

      # "5%" or "20 req/s" ("100 clients").
      def resolution_text
        resolution_ratio ? Units.percent_trimmed(resolution_ratio) : "#{Units.rate_rounded(resolution_rps)} #{unit}"
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
          "confirmations" => confirmations }.merge(broadcast? ? { "unit" => unit, "min_delivery_ratio" => min_delivery_ratio } : {})
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

        def clients(value, key, checker)
          ok = value.is_a?(Integer) && value >= 1 && value <= Experiment::WebSocketLoad::MAX_CLIENTS
          checker.fail!(key, "must be a number of clients, 1-#{Experiment::WebSocketLoad::MAX_CLIENTS}, got #{value.inspect}") unless ok
          value.to_f
        end

        def delivery(value, checker)
          number = percent_or_number(value)
          ok = number&.finite? && number.positive? && number <= 1
          checker.fail!("capacity.min_delivery", "must be a share such as 99.9% or 0.999 (over 0, at most 1), got #{value.inspect}") unless ok
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
