# frozen_string_literal: true

module Rackbench
  module Stats
    # Scales a raw MAD to a consistent estimate of a normal distribution's
    # standard deviation (1 / Phi^-1(3/4)).
    MAD_TO_SIGMA = 1.4826

    # Coefficient of variation that one wild batch cannot inflate:
    # 1.4826 * MAD / median. Falls back to the ordinary stddev / mean when
    # the MAD is 0 (half the batches or more equal: the spread of the rest
    # still counts). nil for fewer than 2 values or a zero median.
    def self.robust_cv(values)
      s = summary(values)
      return nil if s.n < 2 || s.median.zero?
      return s.cv if s.mad.zero?

      MAD_TO_SIGMA * s.mad / s.median.abs
    end

    # Batches per configuration that would detect a relative difference of
    # `detect` between two configurations whose batches vary with the given
    # coefficient of variation, by comparing medians. Normal approximation:
    #
    #   n = (pi / 2) * 2 * cv^2 * (z(1 - alpha / 2) + z(power))^2 / detect^2
    #
    # with alpha = 1 - confidence (two-sided). 2 * cv^2 / n is the variance
    # of the log of a ratio of two means of n batches each; the median of
    # normal data varies pi / 2 times as much as the mean, and the verdict
    # compares medians. Rounded up, and at least 2 (a CI needs two).
    #
    # :cv :: pooled coefficient of variation, sqrt((cv_a^2 + cv_b^2) / 2)
    # :detect :: relative difference to detect, e.g. 0.01 for 1% (default: 0.01)
    # :confidence :: 1 - two-sided alpha (default: 0.95)
    # :power :: probability of detecting the difference (default: 0.8)
    def self.batches_needed(cv:, detect: 0.01, confidence: 0.95, power: 0.8)
      Check.non_negative(cv, "cv")
      Check.positive(detect, "detect")
      Check.fraction(confidence, "confidence")
      Check.fraction(power, "power")

      z = normal_quantile(1.0 - (1.0 - confidence) / 2.0) + normal_quantile(power)
      n = Math::PI / 2.0 * 2.0 * cv**2 * z**2 / detect**2
      # the epsilon keeps an exact integer from rounding up by float noise
      [(n - 1e-9).ceil, 2].max
    end
  end
end
