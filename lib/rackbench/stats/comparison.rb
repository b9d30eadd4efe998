# frozen_string_literal: true

module Rackbench
  module Stats
    # The verdict of a candidate configuration against a baseline.
    #
    # ratio :: median(candidate) / median(baseline); > 1 means the candidate
    #          is faster (nil when a side has no batch)
    # ratio_ci :: [low, high] percentile bootstrap CI of the ratio (nil with
    #             fewer than 2 batches on a side)
    # verdict :: "faster", "slower", "no difference detected" or
    #            "too few batches"
    # batches_needed :: with "no difference detected" only: batches per
    #                   configuration that would detect a difference of
    #                   `detect` at the measured noise (Stats.batches_needed)
    # explanation :: one short sentence saying why
    Comparison = Struct.new(:ratio, :ratio_ci, :verdict, :batches_needed, :explanation, keyword_init: true)

    FASTER = "faster"
    SLOWER = "slower"
    NO_DIFFERENCE = "no difference detected"
    TOO_FEW = "too few batches"

    # Compares two lists of batch throughputs (higher is better).
    #
    # The ratio of medians, with a percentile bootstrap CI that resamples
    # each side's batches independently (Kalibera and Jones 2013): "faster"
    # when the CI lies above 1, "slower" below 1, and "no difference
    # detected" when it spans 1 or lies wholly within the equivalence band
    # [1 - equivalence, 1 + equivalence] (a real but negligible difference).
    #
    # baseline, candidate :: positive finite Numerics, one per batch
    # :equivalence :: half-width of the band of negligible ratios (default: 0.01)
    # :detect :: relative difference batches_needed aims at (default: 0.01)
    # :confidence :: coverage of the CI (default: 0.95)
    # :resamples :: bootstrap resamples (default: 10_000)
    # :seed :: generator seed; same inputs and seed, same result (default: 1)
    # :min_batches :: fewer batches on a side give "too few batches" and no
    #                 CI (default: 2, the least a bootstrap can resample; the
    #                 report asks for 5, see doc/methodology.md)
    def self.compare(baseline, candidate, equivalence: 0.01, detect: 0.01, confidence: 0.95, resamples: 10_000, seed: 1,
                     min_batches: 2)
      base = Comparing.positive(baseline, "baseline")
      cand = Comparing.positive(candidate, "candidate")
      Bootstrap.check_options(:median, confidence, resamples, seed)
      Check.within(equivalence, "equivalence", 0, 0.5)

      ratio = base.empty? || cand.empty? ? nil : median(cand) / median(base)
      raise ArgumentError, "min_batches must be an Integer >= 2, got #{min_batches.inspect}" unless min_batches.is_a?(Integer) && min_batches >= 2
      if base.size < min_batches || cand.size < min_batches
        return Comparing.too_few(ratio, base.size, cand.size, min_batches)
      end

      ci = Comparing.ratio_ci(base, cand, confidence, resamples, seed)
      verdict, explanation = Comparing.verdict(ci, equivalence)
      needed = if verdict == NO_DIFFERENCE
                 pooled = Math.sqrt((robust_cv(base)**2 + robust_cv(cand)**2) / 2.0)
                 batches_needed(cv: pooled, detect: detect, confidence: confidence)
               end
      Comparison.new(ratio: ratio, ratio_ci: ci, verdict: verdict, batches_needed: needed, explanation: explanation)
    end

    # Internals of compare.
    module Comparing
      module_function

      def positive(values, what)
        xs = Check.finite_floats(values, what)
        bad = xs.find { |x| x <= 0 }
        raise ArgumentError, "#{what} throughputs must be positive, got #{bad}" if bad

        xs
      end

      def too_few(ratio, base_n, cand_n, min_batches)
        side, n = base_n < min_batches ? ["baseline", base_n] : ["candidate", cand_n]
        Comparison.new(ratio: ratio, ratio_ci: nil, verdict: TOO_FEW, batches_needed: nil,
                       explanation: "#{side} has #{n} #{n == 1 ? "batch" : "batches"}; " \
                                    "a CI needs at least #{min_batches} per side")
      end

      # Both sides resampled from one generator, one after the other: the
      # draws are independent, and the pairing of the i-th baseline median
      # with the i-th candidate median is as random as any other.
      def ratio_ci(base, cand, confidence, resamples, seed)
        BOOTSTRAPS.fetch([:ratio_ci, base, cand, confidence, resamples, seed]) do
          base_ranks, cand_ranks = MEDIAN_RANKS.fetch([base.size, cand.size, resamples, seed]) do
            rng = Random.new(seed)
            [Bootstrap.median_ranks(base.size, resamples, rng), Bootstrap.median_ranks(cand.size, resamples, rng)]
          end
          base_medians = Bootstrap.medians_at(base.sort, base_ranks)
          cand_medians = Bootstrap.medians_at(cand.sort, cand_ranks)
          ratios = cand_medians.each_with_index.map { |c, i| c / base_medians[i] }
          Bootstrap.percentile_interval(ratios, confidence)
        end
      end

      # [verdict, explanation] for a CI [low, high] of the ratio. The band
      # is tested first: a CI wholly inside it is a negligible difference
      # even when it excludes 1.
      def verdict((low, high), equivalence)
        ci = format("CI %.3f-%.3f", low, high)
        if low >= 1.0 - equivalence && high <= 1.0 + equivalence
          [NO_DIFFERENCE, "#{ci} within the ±#{format("%g", equivalence * 100)}% equivalence band"]
        elsif low > 1.0 then [FASTER, "#{ci} above 1"]
        elsif high < 1.0 then [SLOWER, "#{ci} below 1"]
        else [NO_DIFFERENCE, "#{ci} spans 1"]
        end
      end
    end
  end
end
