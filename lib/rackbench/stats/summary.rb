# frozen_string_literal: true

module Rackbench
  module Stats
    # Location and spread of a list of numbers (one per batch). Every field
    # but n is nil for an empty list.
    #
    # n :: number of values
    # mean, median, min, max :: as named (Floats)
    # stddev :: sample standard deviation (n - 1 denominator); nil when n < 2
    # mad :: raw median absolute deviation from the median, not scaled by
    #        1.4826 (multiply by it for a consistent estimate of a normal
    #        sigma)
    # cv :: coefficient of variation, stddev / mean; nil when stddev is nil
    #       or the mean is zero
    Summary = Struct.new(:n, :mean, :median, :stddev, :mad, :min, :max, :cv, keyword_init: true)

    # Summary of values, a list of finite Numerics.
    def self.summary(values)
      xs = Check.finite_floats(values, "values")
      return Summary.new(n: 0) if xs.empty?

      sorted = xs.sort
      mean = xs.sum / xs.size
      median = quantile(sorted, 0.5)
      stddev = xs.size < 2 ? nil : Math.sqrt(xs.sum { |x| (x - mean)**2 } / (xs.size - 1))
      cv = stddev && !mean.zero? ? stddev / mean : nil
      Summary.new(n: xs.size, mean: mean, median: median, stddev: stddev, mad: mad(xs, median),
                  min: sorted.first, max: sorted.last, cv: cv)
    end

    # The q-quantile (q in [0, 1]) of an already sorted list, interpolating
    # linearly between the two nearest order statistics (Hyndman and Fan's
    # type 7, the default of R and NumPy). nil for an empty list.
    def self.quantile(sorted_values, q)
      Check.within(q, "quantile", 0, 1)
      return nil if sorted_values.empty?

      h = (sorted_values.size - 1) * q.to_f
      below = h.floor
      return sorted_values[below].to_f if below + 1 >= sorted_values.size

      lo = sorted_values[below].to_f
      lo + (h - below) * (sorted_values[below + 1] - lo)
    end

    # Median of values (any order); nil when empty.
    def self.median(values)
      quantile(values.sort, 0.5)
    end

    # Raw median absolute deviation around center (default: the median);
    # nil when values is empty.
    def self.mad(values, center = median(values))
      return nil if values.empty?

      median(values.map { |x| (x - center).abs })
    end
  end
end
