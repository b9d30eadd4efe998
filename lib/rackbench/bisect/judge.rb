# frozen_string_literal: true

module Rackbench
  module Bisect
    # Two measured commits compared as `rackbench gate --strict` compares
    # two runs: every configuration of the later commit against the same
    # configuration of the earlier one (they share their labels: the
    # subject keeps its name in every commit's run), on the figure, with a
    # limit: Gate's intervals, equivalence bands and family confidence,
    # its machine check and its refusal of failed trials. Strict, because
    # a bisection decides on "not worse" as much as on "worse":
    #
    # * WORSE: the gate says regressed (some configuration's interval lies
    #   wholly on the worse side, and its change passes the limit);
    # * NOT_WORSE: ok, every interval ruling out a change beyond the limit;
    # * UNSURE: anything else (an interval reaching beyond the limit, a
    #   failed trial, another machine, a figure not measured).
    class Judge
      VERDICTS = { Gate::REGRESSED => Search::WORSE, Gate::OK => Search::NOT_WORSE,
                   Gate::CANNOT_SAY => Search::UNSURE }.freeze

      # A comparison's verdict and its gate (the evidence: every check's
      # medians, ratio, interval and explanation).
      Judgement = Struct.new(:verdict, :gate) do
        # The checks of every pair, the most worsened first.
        def checks
          gate.results.flat_map(&:checks).sort_by { |c| -(c.worsening || -Float::INFINITY) }
        end

        # The most worsened check with a ratio, or nil.
        def headline
          checks.find(&:ratio)
        end

        # "2.01% worse (1.98% worse to 2.04% worse)" of the headline check, or the gate's reason.
        def text
          low, high = worsening_ci
          return gate.reasons.first || gate.summary unless low

          "#{Judge.change_text(headline.worsening)} (#{Judge.change_text(low)} to #{Judge.change_text(high)})"
        end

        # The headline check's interval as changes for the worse
        # ([low, high], fractions: positive is worse), or nil.
        def worsening_ci
          check = headline
          check&.ratio_ci&.map { |r| check.figure.worsening(r) }&.sort
        end
      end

      # "+2.01% (+1.98 to +2.04)": a change for the worse and its interval
      # in a table's few columns (+ is worse, − better), or nil.
      def self.signed_text(worsening, interval)
        return nil unless worsening && interval

        sign = ->(f) { "#{f.round(4).zero? ? "" : (f.positive? ? "+" : "−")}#{format("%.2f", f.abs * 100)}" }
        "#{sign.call(worsening)}% (#{sign.call(interval[0])} to #{sign.call(interval[1])})"
      end

      # "2.01% worse", "0.40% better", "no change"
      def self.change_text(worsening)
        return "no change" if worsening.round(4).zero?

        "#{Units.percent(worsening.abs)} #{worsening.positive? ? "worse" : "better"}"
      end

      def initialize(settings)
        @settings = settings
      end

      # +to_report+'s configurations against +from_report+'s (Reports of
      # two commits' runs) at +limit+ (a fraction).
      def between(from_report, to_report, limit)
        pairs = from_report.configs.map do |from|
          Gate::Pair.new(from.id, from, to_report.configs.find { |c| c.id == from.id })
        end
        gate = Gate.new(pairs: pairs, rules: [@settings.rule(limit)], options: to_report.options,
                        baseline: Gate::Side.of(from_report), candidate: Gate::Side.of(to_report), strict: true)
        Judgement.new(VERDICTS.fetch(gate.status), gate)
      end

      # The later commit's configurations of a confirmation run (+report+)
      # against the earlier commit's at +limit+: each configuration whose
      # +dimension+ is a key of +labels+ against the one whose dimension
      # is that key's value and every other dimension the same.
      def within(report, dimension, labels, limit)
        pairs = report.configs.filter_map do |config|
          earlier = labels[config.dims[dimension].to_s]
          next nil unless earlier

          base = report.configs.find { |c| c.dims == config.dims.merge(dimension => earlier) }
          Gate::Pair.new(config.label, base, config)
        end
        side = Gate::Side.of(report)
        gate = Gate.new(pairs: pairs, rules: [@settings.rule(limit)], options: report.options, baseline: side,
                        candidate: side, strict: true)
        Judgement.new(VERDICTS.fetch(gate.status), gate)
      end
    end
  end
end
