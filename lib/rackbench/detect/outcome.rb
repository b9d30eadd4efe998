# frozen_string_literal: true

module Rackbench
  module Detect
    # What a finished --detect run achieved, per comparison of the report:
    # the power its batches had to detect the asked difference at the noise
    # of all its batches (Stats.power, pilot included), and, when it ran
    # fewer batches than its pilot said it needed, that the budget was too
    # small.
    class Outcome
      # One comparison: +label+, +baseline+ (configuration labels), +batches+
      # (the smaller side's ok batches), +cv+ (pooled, all batches; nil with
      # fewer than 2 on a side), +power+ (nil with the cv), +needed+ (what
      # the pilot said, nil when it could not), +statement+ (one sentence).
      Row = Struct.new(:label, :baseline, :batches, :cv, :power, :needed, :statement, keyword_init: true)

      attr_reader :settings, :decision, :rows

      # configs :: the report's ConfigSummary list, baselines applied
      # pilot_configs :: the same report's through the pilot's last batch
      # settings :: the run's Detect::Settings
      def initialize(configs, pilot_configs, settings)
        @settings = settings
        @decision = Decision.new(pilot_configs, settings)
        pilot_needs = @decision.needs.to_h { |need| [[need.label, need.baseline], need.needs] }
        @rows = configs.filter_map do |config|
          base = config.baseline_config
          next if base.nil? || base.equal?(config)

          row(config, base, pilot_needs[[config.label, base.label]])
        end
        freeze
      end

      # The "detect" block of the report document (doc/output.md).
      def to_h
        { "settings" => settings.to_h, "pilot_cv" => @decision.pilot_cvs, "needed" => @decision.needed,
          "comparisons" => @rows.map do |r|
            { "config" => r.label, "baseline" => r.baseline, "batches" => r.batches, "cv" => r.cv, "power" => r.power,
              "needed" => r.needed, "budget_too_small" => too_small?(r), "statement" => r.statement }
          end }
      end

      # The terminal's lines.
      def lines
        where = { "cpu" => " (its verdict: server CPU per request, under Inside the server)",
                  "instructions" => " (its verdict: under Instructions per request)" }.fetch(settings.measure, "")
        ["Time to a verdict (#{settings.describe.split(":").first}, pilot #{settings.pilot_batches} batches, " \
         "measure: #{settings.measure_text}#{where}):"] +
          @rows.map { |r| "  #{r.label} against #{r.baseline}: #{r.statement}" }
      end

      private

      def row(config, base, needed)
        n = [settings.values(config).size, settings.values(base).size].min
        cv = Stats.pooled_cv(settings.values(base), settings.values(config))
        power = cv && n.positive? ? Stats.power(cv: cv, batches: n, detect: settings.effect, confidence: settings.confidence) : nil
        r = Row.new(label: config.label, baseline: base.label, batches: n, cv: cv, power: power, needed: needed)
        r.statement = statement(r)
        r
      end

      def too_small?(row)
        !row.needed.nil? && row.batches < row.needed
      end

      def statement(row)
        effect = Detect.percent(settings.effect)
        achieved = if row.power
                     "power #{Detect.percent(row.power.round(2))} to detect #{effect} " \
                       "(#{row.batches} batches, pooled CV #{Detect.percent(row.cv.round(4))})"
                   else
                     "power unknown (fewer than 2 ok batches on a side)"
                   end
        return achieved unless too_small?(row)

        "the budget was too small: #{row.needed} batches needed, #{row.batches} run; #{achieved}"
      end
    end
  end
end
