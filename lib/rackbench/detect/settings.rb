# frozen_string_literal: true

module Rackbench
  module Detect
    # What `--detect` asked, stored in the run's environment (the "detect"
    # key: the store's schema is unchanged) so that a report, and a resumed
    # run, know what the batches were for.
    #
    # :effect :: the relative difference to detect, e.g. 0.02 for 2%
    # :pilot_batches :: batches run before deciding (default: 5, the least the report gives a verdict on)
    # :max_batches :: the most batches the run may take: its plan's size (default: 50)
    # :time_budget_s :: the most wall time the whole experiment may take, in seconds (default: nil: none)
    # :confidence :: of the verdict's interval (default: 0.95)
    # :power :: aimed at (default: 0.8)
    # :baseline :: the report's baseline spec ("server=puma"), or nil for the first configuration
    # :measure :: what the batches are planned and judged on: "rps" (each batch's requests/s, the report's
    #             main figure) or "cpu" (each batch's server CPU µs per request, from the in-server agent:
    #             on a shared machine its batches vary several times less, so a verdict needs several
    #             times fewer batches; doc/methodology.md) or "instructions" (each batch's instructions per
    #             request, counted under valgrind: `measure: instructions`; its batches vary by a tenth of
    #             a percent) (default: "rps")
    Settings = Struct.new(:effect, :pilot_batches, :max_batches, :time_budget_s, :confidence, :power, :baseline,
                          :measure, keyword_init: true) do
      # How each measure is computed and compared.
      MEASURES = {
        "rps" => "requests/s per batch, ratio of medians",
        "cpu" => "server CPU µs per request per batch, ratio of medians",
        "instructions" => "instructions per request per batch, ratio of medians"
      }.freeze

      def initialize(effect:, pilot_batches: 5, max_batches: 50, time_budget_s: nil, confidence: 0.95, power: 0.8,
                     baseline: nil, measure: "rps")
        super
        check!
        freeze
      end

      # The Settings stored as +hash+ (to_h's), or nil for nil.
      def self.from_h(hash)
        return nil unless hash.is_a?(Hash)

        new(effect: hash["effect"], pilot_batches: hash["pilot_batches"], max_batches: hash["max_batches"],
            time_budget_s: hash["time_budget_s"], confidence: hash["confidence"], power: hash["power"],
            baseline: hash["baseline"], measure: MEASURES.key(hash["measure"]) || hash["measure"] || "rps")
      end

      # Each batch's value of the measure for a Report::ConfigSummary, in
      # batch order (the ok batches; for "cpu", those the agent counted; for
      # "instructions", the ok instructions trials).
      def values(config)
        case measure
        when "rps" then config.rps_values
        when "instructions" then config.instructions&.values || []
        else config.inside&.[]("cpu_us_per_request")&.values || []
        end
      end

      # The measure's description.
      def measure_text
        MEASURES.fetch(measure)
      end

      def to_h
        { "effect" => effect, "pilot_batches" => pilot_batches, "max_batches" => max_batches,
          "time_budget_s" => time_budget_s, "confidence" => confidence, "power" => power, "baseline" => baseline,
          "measure" => measure }
      end

      # One line for the run's start.
      def describe
        budget = time_budget_s ? ", time budget #{Experiment::Plan.format_duration(time_budget_s)}" : ""
        "--detect #{Detect.percent(effect)}: a pilot of #{pilot_batches} batches, then the batches each comparison " \
          "needs for a #{Detect.percent(effect)} difference at #{Detect.percent(confidence)} confidence and " \
          "#{Detect.percent(power)} power (measure: #{measure_text}), at most #{max_batches} batches#{budget}"
      end

      private

      def check!
        unless effect.is_a?(Numeric) && effect.positive? && effect < 1
          raise UsageError, "--detect takes a difference between 0% and 100%, e.g. 2%, got #{effect.inspect}"
        end
        raise UsageError, "--pilot-batches must be an integer >= 2, got #{pilot_batches.inspect}" \
          unless pilot_batches.is_a?(Integer) && pilot_batches >= 2
        unless max_batches.is_a?(Integer) && max_batches >= pilot_batches
          raise UsageError, "--max-batches must be an integer >= the pilot's #{pilot_batches} batches, " \
                            "got #{max_batches.inspect}"
        end
        raise UsageError, "--time-budget must be a positive duration, got #{time_budget_s.inspect}" \
          unless time_budget_s.nil? || (time_budget_s.is_a?(Numeric) && time_budget_s.positive?)
        raise UsageError, "confidence must be between 0 and 1, got #{confidence.inspect}" \
          unless confidence.is_a?(Numeric) && confidence.between?(0.5, 0.9999)
        raise UsageError, "power must be between 0 and 1, got #{power.inspect}" \
          unless power.is_a?(Numeric) && power.between?(0.5, 0.9999)
        raise UsageError, "--detect-measure takes #{MEASURES.keys.join(" or ")}, got #{measure.inspect}" \
          unless MEASURES.key?(measure)
      end
    end

    # "2%", "1.5%", "95%".
    def self.percent(fraction)
      "#{format("%g", (fraction * 100).round(4))}%"
    end
  end
end
