# frozen_string_literal: true

module Rackbench
  module Stats
    # The percentile bootstrap interval of median(b) - median(a), each
    # side's batches resampled independently, computed exactly: the ideal
    # bootstrap's distribution (every resample, with its probability)
    # rather than a Monte Carlo sample of it. A function diff asks for
    # hundreds of these intervals at once (one per function, at the
    # family's confidence, whose tails are a few in 100,000): drawing
    # enough resamples for each would take minutes, the exact distribution
    # takes milliseconds and has no Monte Carlo error in its tails.
    #
    # Returns [low, high], or nil when a side has fewer than 2 values.
    #
    # a, b :: finite Numerics, one per batch
    # :confidence :: coverage in (0, 1) (default: 0.95)
    def self.median_difference_ci(a, b, confidence: 0.95)
      xs = Check.finite_floats(a, "a").sort
      ys = Check.finite_floats(b, "b").sort
      Check.fraction(confidence, "confidence")
      return nil if xs.size < 2 || ys.size < 2

      MedianDifference.interval(MedianDifference.distribution(xs), MedianDifference.distribution(ys), confidence)
    end

    # Internals of median_difference_ci.
    module MedianDifference
      # Up to this many values the joint law of the two middle ranks is
      # computed exactly (n^4 steps, once per n); above, it is estimated
      # from SIMULATED_DRAWS resamples of ranks, once per n, seeded.
      EXACT_MAX = 25
      SIMULATED_DRAWS = 200_000

      module_function

      # The bootstrap law of the median of +sorted+ values: [[median,
      # probability]], merged by value. A resample of n values is
      # described by the ranks its middle values come from, whose law
      # depends on n alone (#ranks).
      def distribution(sorted)
        law = Hash.new(0.0)
        ranks(sorted.size).each { |i, j, p| law[(sorted[i] + sorted[j]) / 2.0] += p }
        law.to_a
      end

      # [low, high] of the law of y - x at +confidence+: the quantiles
      # (1 - confidence) / 2 and (1 + confidence) / 2.
      def interval(law_x, law_y, confidence)
        differences = law_y.flat_map { |y, py| law_x.map { |x, px| [y - x, py * px] } }.sort_by(&:first)
        tail = (1.0 - confidence) / 2.0
        [quantile(differences, tail), quantile(differences, 1.0 - tail)]
      end

      # The smallest value whose cumulative probability reaches +q+ (a
      # hair below, for sums of floats).
      def quantile(law, q)
        sum = 0.0
        law.each do |value, p|
          sum += p
          return value if sum >= q - 1e-12
        end
        law.last.first
      end

      # [[i, j, probability]]: the chance that a resample of n values
      # drawn from indices 0...n has its lower middle value at index i
      # and its upper at j (i == j for odd n).
      def ranks(n)
        @ranks ||= {}
        @ranks[n] ||= (n <= EXACT_MAX ? exact_ranks(n) : simulated_ranks(n)).freeze
      end

      # Odd n: the median is the k-th smallest draw, and it is at index i
      # or below when at least k draws are (a binomial count). Even n:
      # F(i, j), the chance that the m-th smallest is at i or below and
      # the (m+1)-th at j or below, differenced over i and j.
      def exact_ranks(n)
        if n.odd?
          k = (n + 1) / 2
          below = Array.new(n + 1) { |i| binomial_tail(n, i.fdiv(n), k) }
          return (0...n).map { |i| [i, i, below[i + 1] - below[i]] }.reject { |_, _, p| p <= 0 }
        end

        m = n / 2
        f = Array.new(n + 1) { |i| Array.new(n + 1) { |j| joint_cdf(n, m, i, j) } }
        pairs = []
        (1..n).each do |i|
          (i..n).each do |j|
            p = f[i][j] - f[i - 1][j] - f[i][j - 1] + f[i - 1][j - 1]
            pairs << [i - 1, j - 1, p] if p > 1e-15
          end
        end
        pairs
      end

      # P(the m-th smallest of n draws has index < i, the (m+1)-th index
      # < j): with a = the draws below i (binomial), the draws in [i, j)
      # are binomial among the other n - a.
      def joint_cdf(n, m, i, j)
        return 0.0 if i.zero? || j.zero?
        return joint_cdf(n, m, j, j) if i > j

        p = i.fdiv(n)
        q = j > i ? (j - i).fdiv(n - i) : 0.0
        (m..n).sum { |a| binomial(n, a, p) * binomial_tail(n - a, q, [m + 1 - a, 0].max) }
      end

      def binomial(n, k, p)
        choose(n, k) * (p**k) * ((1.0 - p)**(n - k))
      end

      # P(Binomial(n, p) >= k).
      def binomial_tail(n, p, k)
        return 1.0 if k <= 0

        (k..n).sum { |j| binomial(n, j, p) }
      end

      def choose(n, k)
        (1..k).reduce(1.0) { |acc, i| acc * (n - k + i) / i }
      end

      def simulated_ranks(n)
        rng = Random.new(n)
        counts = Hash.new(0)
        lower = (n - 1) / 2
        upper = n / 2
        SIMULATED_DRAWS.times do
          draws = Array.new(n) { rng.rand(n) }.sort
          counts[[draws[lower], draws[upper]]] += 1
        end
        counts.map { |(i, j), count| [i, j, count.fdiv(SIMULATED_DRAWS)] }
      end
    end
  end
end
