# frozen_string_literal: true

module Rackbench
  module Stats
    # Bootstrap draws each tail of an interval should hold at the least:
    # an end read from fewer is mostly Monte Carlo noise. With 10, the end
    # of a 99.9% interval is the 10th of 20,000 draws, whose rank varies by
    # about ±3 (the 0.035% to 0.065% quantile): enough to place a verdict,
    # at a cost that keeps a gate of 50 configurations to seconds.
    TAIL_DRAWS = 10
    # The most resamples family_resamples asks for: a 99.99% interval
    # would otherwise need half a million per comparison.
    MAX_FAMILY_RESAMPLES = 100_000

    # The confidence each of +comparisons+ intervals needs so that all of
    # them together cover at +confidence+ (Bonferroni): 1 - (1 -
    # confidence) / comparisons. A gate that judged 100 checks of
    # identical pairs (50 configurations, 2 figures) at 95% each would
    # find 2 or 3 of them worse in a typical run (each interval lies
    # wholly on its worse side 2.5% of the time), and at least one in 92%
    # of runs; at the family's confidence, at most 5% of runs find any.
    # Bonferroni holds
    # whatever the dependence between the checks (the figures of one pair
    # come from the same batches), at the price of wider intervals.
    def self.family_confidence(confidence, comparisons)
      Check.fraction(confidence, "confidence")
      raise ArgumentError, "comparisons must be an Integer >= 1, got #{comparisons.inspect}" unless comparisons.is_a?(Integer) && comparisons >= 1

      1.0 - (1.0 - confidence) / comparisons
    end

    # Resamples for a percentile interval at +confidence+: at least
    # +minimum+, and enough that each tail holds TAIL_DRAWS draws, up to
    # MAX_FAMILY_RESAMPLES.
    def self.family_resamples(confidence, minimum)
      tail = (1.0 - Check.fraction(confidence, "confidence")) / 2.0
      [[minimum, (TAIL_DRAWS / tail).ceil].max, [minimum, MAX_FAMILY_RESAMPLES].max].min
    end
  end
end
