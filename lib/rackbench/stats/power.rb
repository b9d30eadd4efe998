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

    # The coefficient of variation to plan a number of batches with, from a
    # small pilot of two configurations: their pooled plain CV
    # (stddev / mean, pooled over both sides' n - 1 degrees of freedom),
    # raised to its one-sided upper confidence limit at +assurance+
    # (Browne 1995): cv * sqrt(df / chi2(1 - assurance, df)).
    #
    # Why not the robust CV the report uses: from 5 batches a MAD is a
    # poor, low-biased estimate of the spread (a third of the plain
    # stddev's efficiency for normal data), and planning with it gave 65%
    # power where 80% was asked; the plain CV gave 74%, because a pilot
    # that underestimates the noise costs more power than one that
    # overestimates it gains. Raised to its 65% upper limit (outliers left
    # out, below), the mean power is 80% for 80% asked, at about 25% more
    # batches than knowing the true CV would take (doc/methodology.md, "Time to a verdict"). nil
    # when a side has fewer than 2 values or a zero mean.
    #
    # Batches far out of line (robust z beyond 6: Stats.outliers) are left
    # out of the plan first. The verdict compares medians, which a wild
    # batch hardly moves, while a plain CV squares it: on this VM a slow
    # spell over 2 of 5 pilot batches (robust z 8 to 14) planned 3,794
    # batches for a comparison whose 30 batches had a robust CV of 5.6%.
    # From 5 normal batches a MAD is unstable and flags ordinary values at
    # the report's 3.5 (power fell to 73%), hence 6, with the upper limit
    # at 65% instead of 60% to make up for the values it still drops:
    # 80% mean power for 80% asked at a 2% CV, as without it
    # (bench/detect_simulation.rb, "planning").
    #
    # :assurance :: the one-sided confidence of the upper limit (default: 0.65)
    def self.planning_cv(baseline, candidate, assurance: PLANNING_ASSURANCE)
      Check.fraction(assurance, "assurance")
      a = summary(without_outliers(baseline))
      b = summary(without_outliers(candidate))
      return nil unless a.cv && b.cv

      df = a.n + b.n - 2
      pooled = Math.sqrt(((a.n - 1) * a.cv**2 + (b.n - 1) * b.cv**2) / df)
      pooled * Math.sqrt(df / chi_square_quantile(1.0 - assurance, df))
    end

    # +values+ without the ones Stats.outliers flags at the planning
    # threshold, keeping at least 2.
    def self.without_outliers(values)
      flagged = outliers(values, threshold: PLANNING_OUTLIER_THRESHOLD)
      return values if flagged.empty? || values.size - flagged.size < 2

      values.reject.with_index { |_, i| flagged.include?(i) }
    end

    # The assurance planning_cv's upper limit has by default.
    PLANNING_ASSURANCE = 0.65
    # The robust z beyond which planning_cv leaves a pilot batch out.
    PLANNING_OUTLIER_THRESHOLD = 6.0

    # The p-quantile of the chi-square distribution with df degrees of
    # freedom, by the Wilson-Hilferty cube-root normal approximation
    # (within about 1% of the exact quantile from 3 degrees of freedom up,
    # between the 10th and 90th percentiles: all planning_cv needs).
    def self.chi_square_quantile(p, df)
      Check.fraction(p, "probability")
      Check.positive(df, "df")
      k = df.to_f
      k * (1.0 - 2.0 / (9.0 * k) + normal_quantile(p) * Math.sqrt(2.0 / (9.0 * k)))**3
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
