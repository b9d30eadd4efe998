# frozen_string_literal: true

module Rackbench
  module Stats
    # Iglewicz and Hoaglin's modified z-score (1993): the median and MAD
    # stand in for the mean and standard deviation, so the outlier being
    # looked for cannot hide itself by inflating the spread. 0.6745 is
    # Phi^-1(3/4), which makes the score comparable to an ordinary z-score
    # for normal data.
    ROBUST_Z_SCALE = 0.6745
    OUTLIER_THRESHOLD = 3.5

    # Robust z-score of each value, 0.6745 * (x - median) / MAD, as Floats
    # in the input's order. All 0.0 when the MAD is 0 (half the values or
    # more are equal: no scale to measure against).
    def self.robust_z(values)
      xs = Check.finite_floats(values, "values")
      return [] if xs.empty?

      center = median(xs)
      spread = mad(xs, center)
      return Array.new(xs.size, 0.0) if spread.zero?

      xs.map { |x| ROBUST_Z_SCALE * (x - center) / spread }
    end

    # Indexes of the values whose robust z-score exceeds threshold in
    # absolute value (Iglewicz and Hoaglin recommend 3.5). Outliers are
    # flagged for the reader, never dropped: a slow batch may be the
    # truth about a configuration (a GC pause, a bad boot).
    #
    # :threshold :: |z| above which a value is flagged (default: 3.5)
    def self.outliers(values, threshold: OUTLIER_THRESHOLD)
      Check.positive(threshold, "threshold")

      robust_z(values).each_with_index.select { |z, _| z.abs > threshold }.map(&:last)
    end
  end
end
