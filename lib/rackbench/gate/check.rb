# frozen_string_literal: true

module Rackbench
  class Gate
    # One figure of one pair judged against its Rule: the baseline's and
    # the candidate's medians, the ratio B/A with its bootstrap interval
    # (Stats.compare, at the gate's family confidence), how much worse the
    # candidate is, and the status:
    #
    # * REGRESSED: the interval lies wholly on the worse side of 1 (the
    #   comparison says worse, beyond the equivalence band) and the
    #   median ratio is worse than the rule's limit;
    # * OK: anything else that could be judged (better, no difference, or
    #   worse by less than the limit);
    # * CANNOT_SAY: too few batches on a side, the figure not measured on
    #   a side, or a value a ratio cannot be taken of.
    #
    # verdict :: "worse", "better", "no difference detected", "too few
    #            batches" or "not measured"
    Check = Struct.new(:rule, :baseline, :candidate, :ratio, :ratio_ci, :worsening, :verdict, :status, :explanation,
                       keyword_init: true) do
      def figure = rule.figure
      def judged? = !ratio_ci.nil?

      def to_h
        { "figure" => figure.name, "words" => figure.words, "limit" => rule.limit, "baseline_median" => baseline,
          "candidate_median" => candidate, "ratio" => ratio, "ratio_ci" => ratio_ci, "worsening" => worsening,
          "verdict" => verdict, "status" => status, "explanation" => explanation }
      end
    end

    WORSE = "worse"
    BETTER = "better"
    NOT_MEASURED = "not measured"

    # Judges checks; one per gate, holding the confidence and resamples
    # every check of the family uses.
    class Judge
      # options :: the Report::Options (equivalence, seed, min_batches)
      # confidence :: of each interval: the family's (Stats.family_confidence)
      def initialize(options, confidence:)
        @options = options
        @compare_options = options.compare_options.merge(
          confidence: confidence, resamples: Stats.family_resamples(confidence, options.resamples)
        )
      end

      # Whether +rule+'s figure has values on both sides of +pair+, enough
      # for an interval: a check that counts in the family.
      def judgeable?(pair, rule)
        values = [pair.baseline, pair.candidate].map { |config| config && rule.figure.of(config) }
        values.all? { |v| v && v.size >= @options.min_batches && v.all?(&:positive?) }
      end

      # The Check of +rule+ on +pair+ (Gate::Pair).
      def check(pair, rule)
        figure = rule.figure
        base = pair.baseline && figure.of(pair.baseline)
        cand = pair.candidate && figure.of(pair.candidate)
        medians = { baseline: base && Stats.median(base), candidate: cand && Stats.median(cand) }
        missing = { "baseline" => base, "candidate" => cand }.select { |_, v| v.nil? }.keys
        unless missing.empty?
          return Check.new(rule: rule, **medians, verdict: NOT_MEASURED, status: CANNOT_SAY,
                           explanation: "no #{figure.words} measured on the #{missing.join(" and the ")} side")
        end
        unless (base + cand).all?(&:positive?)
          return Check.new(rule: rule, **medians, verdict: NOT_MEASURED, status: CANNOT_SAY,
                           explanation: "a batch's #{figure.words} is 0 or below: no ratio to judge")
        end

        judged(rule, medians, Stats.compare(base, cand, **@compare_options))
      end

      private

      def judged(rule, medians, comparison)
        figure = rule.figure
        worsening = comparison.ratio && figure.worsening(comparison.ratio)
        fields = { rule: rule, **medians, ratio: comparison.ratio, ratio_ci: comparison.ratio_ci, worsening: worsening }
        if comparison.verdict == Stats::TOO_FEW
          return Check.new(**fields, verdict: Stats::TOO_FEW, status: CANNOT_SAY, explanation: comparison.explanation)
        end

        verdict = case comparison.verdict
                  when figure.worse_verdict then WORSE
                  when Stats::NO_DIFFERENCE then Stats::NO_DIFFERENCE
                  else BETTER
                  end
        status = verdict == WORSE && worsening > rule.limit ? REGRESSED : OK
        Check.new(**fields, verdict: verdict, status: status,
                            explanation: explanation(verdict, status, worsening, rule, comparison))
      end

      def explanation(verdict, status, worsening, rule, comparison)
        change = Units.percent_trimmed(worsening.abs)
        limit = Units.percent_trimmed(rule.limit)
        case verdict
        when WORSE
          status == REGRESSED ? "#{change} worse, beyond the #{limit} limit (#{comparison.explanation})" : "#{change} worse, within the #{limit} limit (#{comparison.explanation})"
        when BETTER then "#{change} better (#{comparison.explanation})"
        else "no difference detected (#{comparison.explanation})"
        end
      end
    end
  end
end
