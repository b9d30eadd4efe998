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
    #   a side, or a value a ratio cannot be taken of; and, when the gate
    #   is strict, an interval whose worse end reaches beyond the limit
    #   (a regression beyond it is not ruled out).
    #
    # An OK check whose interval reaches beyond the limit says so in its
    # explanation, with the batches that would rule it out: the gate
    # passed for want of a finding, not because the data excluded one.
    #
    # verdict :: "worse", "better", "no difference detected", "too few
    #            batches" or "not measured"
    # ruled_out :: whether the interval rules out a regression beyond the
    #              limit (its worse end within it); nil without an interval
    Check = Struct.new(:rule, :baseline, :candidate, :ratio, :ratio_ci, :worsening, :verdict, :status, :explanation,
                       :ruled_out, keyword_init: true) do
      def figure = rule.figure
      def judged? = !ratio_ci.nil?

      def to_h
        { "figure" => figure.name, "words" => figure.words, "limit" => rule.limit, "baseline_median" => baseline,
          "candidate_median" => candidate, "ratio" => ratio, "ratio_ci" => ratio_ci, "worsening" => worsening,
          "verdict" => verdict, "status" => status, "explanation" => explanation, "ruled_out" => ruled_out }
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
      # :strict :: an interval that does not rule out a regression beyond
      #            the limit cannot say (default: false: it passes, and says so)
      def initialize(options, confidence:, strict: false)
        @options = options
        @strict = strict
        family = { confidence: confidence, resamples: Stats.family_resamples(confidence, options.resamples) }
        @compare_options = options.compare_options.merge(family)
        @instructions_compare_options = options.compare_options(instructions: true).merge(family)
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

        # batches_needed (with "no difference detected") is for the rule's limit.
        detect = rule.limit.positive? ? rule.limit : @options.detect
        compare_options = figure.instructions ? @instructions_compare_options : @compare_options
        judged(rule, medians, Stats.compare(base, cand, **compare_options, detect: detect))
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
        text = explanation(verdict, status, worsening, rule, comparison)
        reach = reach(figure, comparison.ratio_ci)
        if status == OK && reach > rule.limit
          text += "; the interval reaches #{Units.percent_trimmed(reach)} worse, so a regression beyond the limit " \
                  "is not ruled out#{needed(comparison)}"
          status = CANNOT_SAY if @strict
        end
        Check.new(**fields, verdict: verdict, status: status, explanation: text, ruled_out: reach <= rule.limit)
      end

      # How much worse the candidate may be at the worse end of the interval.
      def reach(figure, (low, high))
        figure.better == :higher ? 1.0 - low : high - 1.0
      end

      def needed(comparison)
        n = comparison.batches_needed
        n ? " (about #{n} batches per side would)" : ""
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
