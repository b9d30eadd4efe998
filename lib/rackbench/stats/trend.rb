# frozen_string_literal: true

module Rackbench
  module Stats
    # Whether throughput was still rising during a measured window.
    #
    # slope_per_s :: Theil-Sen slope, in requests/s gained per second (nil
    #                when too short)
    # relative_rise :: the fitted rise over the window, slope * (points - 1),
    #                  as a fraction of the median (nil when too short or the
    #                  median is 0)
    # rising :: true when the rise is both significant and large
    # reason :: one sentence saying why
    # p_value :: one-sided Mann-Kendall p-value of an upward trend (nil when
    #            too short)
    Trend = Struct.new(:slope_per_s, :relative_rise, :rising, :reason, :p_value, keyword_init: true)

    TREND_MIN_POINTS = 5
    TREND_ALPHA = 0.05

    # Is throughput still rising (a warmup too short)? per_second: the
    # measured window's completed requests per second, in order (the
    # engine's timeline "requests"). The last second is ignored: requests
    # drained after the window land there, so it is partial.
    #
    # Rising means both: a Mann-Kendall test finds an upward trend at the
    # 5% level (one-sided; rank-based, so one slow second cannot fake it),
    # AND the Theil-Sen line rises by more than min_rise of the median over
    # the window (a significant 0.1% creep is not worth a warning). Fewer
    # than 5 points left: not rising, with the reason.
    #
    # :min_rise :: smallest fitted rise over the window, as a fraction of
    #              the median, that counts (default: 0.02)
    def self.trend(per_second, min_rise: 0.02)
      Check.non_negative(min_rise, "min_rise")

      points = Check.finite_floats(per_second, "per_second")[0...-1]
      if points.size < TREND_MIN_POINTS
        return Trend.new(rising: false, reason: "#{points.size} full seconds measured (the last is ignored); " \
                                                "a trend needs at least #{TREND_MIN_POINTS}")
      end

      TrendTest.judge(points, min_rise)
    end

    # Internals of trend.
    module TrendTest
      module_function

      def judge(points, min_rise)
        slope = theil_sen_slope(points)
        p_value = mann_kendall_p(points)
        center = Stats.median(points)
        span_s = points.size - 1
        unless center.positive?
          return Trend.new(slope_per_s: slope, rising: false, p_value: p_value,
                           reason: "no requests completed in the measured window")
        end

        rise = slope * span_s / center
        change = format("fitted change %+.1f%% over %d s (Mann-Kendall p = %.3g)", rise * 100, span_s, p_value)
        rising, reason =
          if p_value >= TREND_ALPHA then [false, "no significant rise: #{change}"]
          elsif rise <= min_rise then [false, "#{change}, under the #{format("%g", min_rise * 100)}% that counts"]
          else [true, "still rising: #{change}; the warmup may be too short"]
          end
        Trend.new(slope_per_s: slope, relative_rise: rise, rising: rising, reason: reason, p_value: p_value)
      end

      # Theil (1950) and Sen (1968): the median of the slopes between every
      # pair of points. Robust to almost 29% of wild points, unlike least
      # squares, which one stalled second tilts. O(n^2) pairs.
      def theil_sen_slope(points)
        slopes = []
        points.each_with_index do |y_i, i|
          (i + 1...points.size).each { |j| slopes << (points[j] - y_i) / (j - i) }
        end
        Stats.median(slopes)
      end

      # One-sided p-value of an upward trend by the Mann-Kendall test (Mann
      # 1945; Kendall 1975), normal approximation with continuity correction
      # and the variance corrected for ties (equal counts are common at low
      # rates). 1.0 when every point is equal.
      def mann_kendall_p(points)
        s = 0
        points.each_with_index do |y_i, i|
          (i + 1...points.size).each { |j| s += (points[j] <=> y_i) }
        end
        n = points.size
        ties = points.tally.values.sum { |t| t * (t - 1) * (2 * t + 5) }
        variance = (n * (n - 1) * (2 * n + 5) - ties) / 18.0
        return 1.0 unless variance.positive?

        corrected = s - (s <=> 0) # continuity: S moves in steps of 2
        Stats.normal_cdf(-corrected / Math.sqrt(variance))
      end
    end
  end
end
