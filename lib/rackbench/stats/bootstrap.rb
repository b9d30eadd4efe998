# frozen_string_literal: true

module Rackbench
  module Stats
    # Percentile bootstrap confidence interval of a statistic over values
    # (Efron and Tibshirani 1993, ch. 13): resample the values with
    # replacement, compute the statistic of each resample, and take the
    # (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of those.
    # Returns [low, high] as Floats, or nil when there are fewer than 2
    # values (one batch says nothing about the spread).
    #
    # values :: finite Numerics, one per batch
    # :statistic :: :median or :mean (default: :median)
    # :confidence :: coverage in (0, 1) (default: 0.95)
    # :resamples :: number of bootstrap resamples (default: 10_000)
    # :seed :: seed of the generator; the same seed gives the same interval
    #          (default: 1)
    def self.bootstrap_ci(values, statistic: :median, confidence: 0.95, resamples: 10_000, seed: 1)
      xs = Check.finite_floats(values, "values")
      Bootstrap.check_options(statistic, confidence, resamples, seed)
      return nil if xs.size < 2

      BOOTSTRAPS.fetch([:bootstrap_ci, xs, statistic, confidence, resamples, seed]) do
        draws = if statistic == :median
                  ranks = MEDIAN_RANKS.fetch([xs.size, resamples, seed]) do
                    Bootstrap.median_ranks(xs.size, resamples, Random.new(seed))
                  end
                  Bootstrap.medians_at(xs.sort, ranks)
                else
                  Bootstrap.distribution(xs, statistic, resamples, Random.new(seed))
                end
        Bootstrap.percentile_interval(draws, confidence)
      end
    end

    # Internals of the bootstrap, shared with compare.
    module Bootstrap
      STATISTICS = %i[median mean].freeze

      module_function

      def check_options(statistic, confidence, resamples, seed)
        unless STATISTICS.include?(statistic)
          raise ArgumentError, "statistic must be one of #{STATISTICS.join(", ")}, got #{statistic.inspect}"
        end
        Check.fraction(confidence, "confidence")
        unless resamples.is_a?(Integer) && resamples.positive?
          raise ArgumentError, "resamples must be a positive Integer, got #{resamples.inspect}"
        end
        raise ArgumentError, "seed must be an Integer, got #{seed.inspect}" unless seed.is_a?(Integer)
      end

      # The statistic of each of `resamples` resamples of xs, drawn from rng
      # (a Random: never the global generator, so a report is reproducible
      # whatever else ran).
      def distribution(xs, statistic, resamples, rng)
        statistic == :median ? medians(xs.sort, resamples, rng) : means(xs, resamples, rng)
      end

      # The medians of `resamples` resamples of +sorted+ drawn from rng.
      def medians(sorted, resamples, rng)
        medians_at(sorted, median_ranks(sorted.size, resamples, rng))
      end

      # Which of n sorted values each resample's median stands on: [lows,
      # highs], the 0-based ranks of its two middle values (equal when n is
      # odd), one pair per resample, drawn from rng.
      #
      # Why ranks apart from values: a resample of sorted values is fully
      # described by how many times each index was drawn, and so are its
      # middle order statistics; they depend on n and the generator only,
      # never on the values. A report draws the same ranks for every figure
      # and configuration of the same batch count (each bootstrap starts a
      # generator of the same seed), so they are kept (MEDIAN_RANKS) and
      # each later bootstrap only reads its values at them: the same draws,
      # and the same intervals, as drawing indexes each time.
      #
      # Why counts instead of sorting each resample: walking the counts
      # finds the middle order statistics in O(n) with no allocation.
      # `while` rather than blocks: this is the hot loop of every report.
      def median_ranks(n, resamples, rng)
        lower_rank = (n - 1) / 2 # 0-based ranks of the two middle values
        upper_rank = n / 2       # (equal when n is odd)
        counts = Array.new(n, 0)
        lows = Array.new(resamples)
        highs = Array.new(resamples)
        r = 0
        while r < resamples
          counts.fill(0)
          j = 0
          while j < n
            counts[rng.rand(n)] += 1
            j += 1
          end
          i = 0
          seen = counts[0]
          while seen <= lower_rank
            i += 1
            seen += counts[i]
          end
          lows[r] = i
          while seen <= upper_rank
            i += 1
            seen += counts[i]
          end
          highs[r] = i
          r += 1
        end
        [lows.freeze, highs.freeze]
      end

      # The medians of +sorted+ at +ranks+ (median_ranks).
      def medians_at(sorted, (lows, highs))
        Array.new(lows.size) { |r| (sorted[lows[r]] + sorted[highs[r]]) / 2.0 }
      end

      def means(xs, resamples, rng)
        n = xs.size
        Array.new(resamples) do
          sum = 0.0
          n.times { sum += xs[rng.rand(n)] }
          sum / n
        end
      end

      # [low, high] quantiles of the bootstrap draws for a two-sided
      # interval of the given confidence.
      def percentile_interval(draws, confidence)
        sorted = draws.sort
        tail = (1.0 - confidence) / 2.0
        [Stats.quantile(sorted, tail), Stats.quantile(sorted, 1.0 - tail)]
      end
    end
  end
end
