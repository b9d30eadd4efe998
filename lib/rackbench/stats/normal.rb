# frozen_string_literal: true

module Rackbench
  module Stats
    # Standard normal CDF: P(Z <= x). Written with erfc so that the lower
    # tail keeps its relative precision (1 - erf would cancel to 0 there).
    def self.normal_cdf(x)
      0.5 * Math.erfc(-x / Math.sqrt(2.0))
    end

    # Inverse of the standard normal CDF: the x with P(Z <= x) = p, for p
    # in [0, 1] (-Infinity at 0, Infinity at 1). Accurate to a few ulps.
    #
    # Why this way: a rational approximation of the tail (Abramowitz and
    # Stegun 26.2.23, error below 4.5e-4) gives a starting point, and
    # Halley's method on normal_cdf then converges cubically, so two or
    # three steps reach full double precision. Working on the lower tail
    # (p <= 0.5) and mirroring keeps the relative precision of small p.
    def self.normal_quantile(p)
      Check.within(p, "probability", 0, 1)
      return -Float::INFINITY if p.zero?
      return Float::INFINITY if p == 1
      return 0.0 if p == 0.5

      lower = p < 0.5 ? p.to_f : 1.0 - p
      x = Normal.refine(Normal.tail_guess(lower), lower)
      p < 0.5 ? x : -x
    end

    # Internals of normal_quantile.
    module Normal
      SQRT_2PI = Math.sqrt(2.0 * Math::PI)
      # Abramowitz and Stegun 26.2.23: numerator c0..c2, denominator d1..d3.
      GUESS_NUM = [2.515517, 0.802853, 0.010328].freeze
      GUESS_DEN = [1.432788, 0.189269, 0.001308].freeze
      MAX_STEPS = 10

      module_function

      # Rough quantile of a lower-tail probability q in (0, 0.5].
      def tail_guess(q)
        t = Math.sqrt(-2.0 * Math.log(q))
        num = GUESS_NUM[0] + t * (GUESS_NUM[1] + t * GUESS_NUM[2])
        den = 1.0 + t * (GUESS_DEN[0] + t * (GUESS_DEN[1] + t * GUESS_DEN[2]))
        -(t - num / den)
      end

      # Halley steps on f(x) = cdf(x) - q, whose derivative is the density
      # phi(x) and second derivative -x phi(x): the step is u / (1 + x u / 2)
      # with u = f / phi.
      def refine(x, q)
        MAX_STEPS.times do
          density = Math.exp(-0.5 * x * x) / SQRT_2PI
          u = (Stats.normal_cdf(x) - q) / density
          step = u / (1.0 + 0.5 * x * u)
          x -= step
          break if step.abs <= 1e-15 * x.abs
        end
        x
      end
    end
  end
end
