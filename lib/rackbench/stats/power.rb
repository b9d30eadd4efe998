# frozen_string_literal: true

module Rackbench
  module Stats
    # The power a comparison of +batches+ batches per configuration has to
    # detect a relative difference of +detect+, at the measured noise:
    # batches_needed solved for the power, with the same normal
    # approximation (doc/methodology.md, "Time to a verdict"):
    #
    #   power = Phi(detect * sqrt(batches / pi) / cv - z(1 - alpha / 2))
    #
    # (n = pi * cv^2 * (z(1 - alpha / 2) + z(power))^2 / detect^2 read
    # backwards). A noiseless pair (cv 0) has power 1.
    #
    # :cv :: pooled coefficient of variation, sqrt((cv_a^2 + cv_b^2) / 2)
    # :batches :: batches per configuration (the smaller side's)
    # :detect :: relative difference to detect, e.g. 0.02 for 2%
    # :confidence :: 1 - two-sided alpha (default: 0.95)
    def self.power(cv:, batches:, detect:, confidence: 0.95)
      Check.non_negative(cv, "cv")
      Check.positive(batches, "batches")
      Check.positive(detect, "detect")
      Check.fraction(confidence, "confidence")
      return 1.0 if cv.zero?

      z_alpha = normal_quantile(1.0 - (1.0 - confidence) / 2.0)
      normal_cdf(detect * Math.sqrt(batches / Math::PI) / cv - z_alpha)
    end

    # The pooled coefficient of variation of two lists of batch values, each
    # measured robustly (robust_cv): what batches_needed and power take.
    # nil when either side's CV is unknown (fewer than 2 values).
    def self.pooled_cv(baseline, candidate)
      a = robust_cv(baseline)
      b = robust_cv(candidate)
      a && b ? Math.sqrt((a**2 + b**2) / 2.0) : nil
    end
  end
end
