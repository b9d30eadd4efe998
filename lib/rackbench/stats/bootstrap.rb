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
        draws = Bootstrap.distribution(xs, statistic, resamples, Random.new(seed))
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

      # Why counts instead of sorting each resample: a resample of sorted
      # values is fully described by how many times each index was drawn,
      # and walking those counts finds the middle order statistics in O(n)
      # with no allocation. This is what keeps compare's 2 x 10,000
      # resamples fast in Ruby. The draws are the same as drawing indexes.
      def medians(sorted, resamples, rng)
        n = sorted.size
        lower_rank = (n - 1) / 2 # 0-based ranks of the two middle values
        upper_rank = n / 2       # (equal when n is odd)
        counts = Array.new(n, 0)
        Array.new(resamples) do
          counts.fill(0)
          n.times { counts[rng.rand(n)] += 1 }
          i = 0
          seen = counts[0]
          while seen <= lower_rank
            i += 1
            seen += counts[i]
          end
          lower = sorted[i]
          while seen <= upper_rank
            i += 1
            seen += counts[i]
          end
          (lower + sorted[i]) / 2.0
        end
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
