# frozen_string_literal: true

module Rackbench
  module Stats
    # Above this many values the exact distribution (n² pairs for an even
    # n) costs more than drawing resamples: Stats.bootstrap_ci is used.
    MEDIAN_INTERVAL_EXACT_MAX = 200

    # The percentile bootstrap interval of the median of +values+, computed
    # exactly instead of by drawing resamples: the interval Stats.bootstrap_ci
    # (statistic: :median) converges to as its resamples grow, with no seed
    # and no Monte Carlo error. nil below 2 values.
    #
    # Why: a published history computes one interval per run, configuration
    # and figure (a year of 20 configurations is over 20,000), and 10,000
    # drawn resamples cost about 35 ms each in Ruby, this about 0.1 ms. With
    # a handful of batches the bootstrap distribution of the median is
    # discrete (its values are order statistics or means of two), so the
    # drawn interval almost always lands on the same two values as this one.
    #
    # How: a resample of n values from the sorted x_1 <= ... <= x_n is
    # described by C_i, how many draws fall at or below index i, which is
    # Binomial(n, i/n). Its r-th order statistic is at or below x_i exactly
    # when C_i >= r. For an odd n the median is the m-th order statistic
    # (m = (n+1)/2): P(median = x_i) = P(C_i >= m) - P(C_(i-1) >= m). For an
    # even n it is the mean of the a-th and (a+1)-th (a = n/2), whose joint
    # law comes from G(u, v) = P(C_u = a and C_v = a) = binom(n, a) (u/n)^a
    # (1 - v/n)^(n-a), u <= v: exactly a draws at or below u, the rest
    # above v (see #even_median_law).
    #
    #   Stats.median_interval([98, 99, 100, 101, 102], confidence: 0.95) # => [98.0, 102.0]
    def self.median_interval(values, confidence: 0.95)
      xs = Check.finite_floats(values, "values").sort
      Check.fraction(confidence, "confidence")
      return nil if xs.size < 2
      return bootstrap_ci(xs, statistic: :median, confidence: confidence) if xs.size > MEDIAN_INTERVAL_EXACT_MAX

      law = xs.size.odd? ? MedianLaw.odd(xs) : MedianLaw.even(xs)
      tail = (1.0 - confidence) / 2.0
      [MedianLaw.quantile(law, tail), MedianLaw.quantile(law, 1.0 - tail)]
    end

    # The bootstrap law of the median of a sorted sample: [[value,
    # probability], ...] sorted by value (Stats.median_interval).
    module MedianLaw
      module_function

      def odd(xs)
        n = xs.size
        m = (n + 1) / 2
        at_least = Array.new(n + 1) { |i| binomial_tail(n, i.fdiv(n), m) }
        xs.each_index.map { |i| [xs[i], at_least[i + 1] - at_least[i]] }
      end

      # P(y_a = x_i, y_(a+1) = x_j), 1-based i <= j, from G:
      # i = j: P(C_i >= a+1) - P(C_(i-1) >= a) + G(i-1, i);
      # i < j: G(i, j-1) - G(i-1, j-1) - G(i, j) + G(i-1, j).
      def even(xs)
        n = xs.size
        a = n / 2
        log_choose = Math.lgamma(n + 1)[0] - Math.lgamma(a + 1)[0] - Math.lgamma(n - a + 1)[0]
        g = ->(u, v) { u.zero? || v == n ? 0.0 : Math.exp(log_choose + a * Math.log(u.fdiv(n)) + (n - a) * Math.log(1 - v.fdiv(n))) }
        law = []
        (1..n).each do |i|
          same = binomial_tail(n, i.fdiv(n), a + 1) - binomial_tail(n, (i - 1).fdiv(n), a) + g.call(i - 1, i)
          law << [xs[i - 1], same]
          ((i + 1)..n).each do |j|
            p = g.call(i, j - 1) - g.call(i - 1, j - 1) - g.call(i, j) + g.call(i - 1, j)
            law << [(xs[i - 1] + xs[j - 1]) / 2.0, p] if p.positive?
          end
        end
        law.sort_by(&:first)
      end

      # P(Binomial(n, p) >= k).
      def binomial_tail(n, p, k)
        return 1.0 if k <= 0
        return 0.0 if p <= 0
        return 1.0 if p >= 1

        log_p = Math.log(p)
        log_q = Math.log(1 - p)
        (k..n).sum do |r|
          Math.exp(Math.lgamma(n + 1)[0] - Math.lgamma(r + 1)[0] - Math.lgamma(n - r + 1)[0] + r * log_p + (n - r) * log_q)
        end
      end

      # The smallest value whose cumulative probability reaches q (what the
      # q-quantile of many drawn resamples settles on).
      def quantile(law, q)
        cumulative = 0.0
        law.each do |value, p|
          cumulative += p
          # The sum of floating-point probabilities may fall short of 1 by a
          # rounding error: a q near 1 must still land on the last value.
          return value if cumulative >= q - 1e-12
        end
        law.last.first
      end
    end
  end
end
