# frozen_string_literal: true

module Rackbench
  module Stats
    # P(|T| <= t) for Student's t with +df+ degrees of freedom (a positive
    # Integer), exactly: for whole degrees of freedom the distribution has
    # closed forms in theta = atan(t / sqrt(df)) (Abramowitz and Stegun
    # 26.7.3 and 26.7.4), finite sums of powers of cos(theta), so no
    # incomplete beta function is needed.
    def self.student_t_two_sided(t, df)
      raise ArgumentError, "df must be a positive Integer, got #{df.inspect}" unless df.is_a?(Integer) && df.positive?
      return 0.0 if t <= 0
      return 1.0 if t.infinite?

      theta = Math.atan(t / Math.sqrt(df))
      c2 = Math.cos(theta)**2
      if df.odd?
        sum = 0.0
        term = Math.cos(theta)
        (1..(df - 1) / 2).each do |k|
          sum += term
          term *= c2 * (2.0 * k) / ((2.0 * k) + 1)
        end
        (2.0 / Math::PI) * (theta + (Math.sin(theta) * (df == 1 ? 0.0 : sum)))
      else
        sum = 0.0
        term = 1.0
        (1..df / 2).each do |k|
          sum += term
          term *= c2 * ((2.0 * k) - 1) / (2.0 * k)
        end
        Math.sin(theta) * sum
      end
    end

    # The t with P(|T| <= t) = +confidence+ for Student's t with +df+
    # degrees of freedom: the half-width, in standard errors, of a
    # two-sided interval at that confidence. Found by bisection on
    # student_t_two_sided, which is monotone, to a relative 1e-10.
    def self.student_t_quantile(confidence, df)
      Check.fraction(confidence, "confidence")
      # A diff asks for hundreds at one confidence and a few degrees of
      # freedom: each is found once.
      (@student_t_quantiles ||= {})[[confidence, df]] ||= StudentT.quantile(confidence, df)
    end

    # Internals of student_t_quantile.
    module StudentT
      module_function

      def quantile(confidence, df)
        low = 0.0
        high = 1.0
        high *= 2 while Stats.student_t_two_sided(high, df) < confidence && high < 1e12
        200.times do
          mid = (low + high) / 2
          Stats.student_t_two_sided(mid, df) < confidence ? low = mid : high = mid
          break if high - low <= 1e-10 * high
        end
        high
      end
    end

    # Welch's interval of mean(b) - mean(a): the difference of the means
    # plus or minus Student's t at +confidence+ (with the Welch-Satterthwaite
    # degrees of freedom, rounded down) times the standard error
    # sqrt(var(a)/na + var(b)/nb). Returns [low, high], or nil when a side
    # has fewer than 2 values. Two sides without any spread give the
    # difference itself: every batch of B differs from every batch of A by
    # it.
    #
    # Why means and t here, where comparisons of configurations use the
    # bootstrap of medians: a function diff asks for hundreds of intervals
    # at the family's confidence (tails of a few in 100,000), which a
    # percentile bootstrap of 5 batches cannot reach (its interval never
    # leaves the two sides' ranges, so an A/A would mark about one function
    # in a hundred changed); and a function's count over a window is often
    # discrete (a GC that falls in it or not), where a median jumps between
    # levels. Means add up, too: the functions' differences sum to the
    # whole's. Simulated with 300 functions per A/A: no function marked in
    # 100 A/As of normal, skewed or whole-number counts, at 5 or 10 batches.
    def self.mean_difference_ci(a, b, confidence: 0.95)
      xs = Check.finite_floats(a, "a")
      ys = Check.finite_floats(b, "b")
      Check.fraction(confidence, "confidence")
      return nil if xs.size < 2 || ys.size < 2

      va = variance(xs) / xs.size
      vb = variance(ys) / ys.size
      difference = (ys.sum / ys.size) - (xs.sum / xs.size)
      se = Math.sqrt(va + vb)
      return [difference, difference] if se.zero?

      df = ((va + vb)**2 / ((va**2 / (xs.size - 1)) + (vb**2 / (ys.size - 1)))).floor.clamp(1, 1_000_000)
      half = student_t_quantile(confidence, df) * se
      [difference - half, difference + half]
    end

    # The sample variance (n - 1 in the denominator).
    def self.variance(values)
      mean = values.sum / values.size
      values.sum { |v| (v - mean)**2 } / (values.size - 1)
    end
  end
end
