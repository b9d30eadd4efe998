# frozen_string_literal: true

module Rackbench
  # How every figure rackbench prints is written, in one place (wrk's
  # units.c): latencies and durations, bytes, rates, ratios, percentages
  # and intervals. The terminal table, the HTML page, the per-trial table,
  # `rackbench load` and `rackbench compare` all format through here, so
  # one figure reads the same wherever it appears. (CSV and JSON carry
  # the numbers themselves, unformatted.)
  #
  # Every formatter returns NONE ("-") for nil: an unknown figure is
  # shown as unknown, never as 0.
  #
  #   Rackbench::Units.latency_us(1500)      # => "1.50ms"
  #   Rackbench::Units.megabytes(30_000_000) # => "30.0 MB"
  #   Rackbench::Units.percent(0.012)        # => "1.20%"
  module Units
    NONE = "-"

    # Binary prefixes of Units.bytes, after "B".
    BINARY_PREFIXES = %w[KB MB GB TB].freeze

    module_function

    # A latency (or any short duration) in microseconds, in the unit of
    # its size: 512 -> "512.0us", 1500 -> "1.50ms", 2_000_000 -> "2.00s".
    def latency_us(us)
      return NONE if us.nil?

      if us >= 1_000_000 then format("%.2fs", us / 1e6)
      elsif us >= 1000 then format("%.2fms", us / 1e3)
      else format("%.1fus", us)
      end
    end

    # A duration in seconds: 2.5 -> "2.50s" (+digits+ decimals, default 2).
    def seconds(duration_s, digits: 2)
      return NONE if duration_s.nil?

      format("%.#{digits}fs", duration_s)
    end

    # A size in bytes with binary prefixes, as wrk prints transfer:
    # 512 -> "512B", 1536 -> "1.50KB", 3 * 2**20 -> "3.00MB".
    def bytes(bytes)
      return NONE if bytes.nil?

      value = bytes.to_f
      prefixes = BINARY_PREFIXES.dup
      unit = "B"
      while value >= 1024 && !prefixes.empty?
        value /= 1024
        unit = prefixes.shift
      end
      unit == "B" ? "#{bytes.to_i}B" : format("%.2f%s", value, unit)
    end

    # Bytes in decimal megabytes (10^6, as memory and transfer are
    # reported beside req/s): 30_000_000 -> "30.0 MB"; with unit: false,
    # "30.0" for a column whose heading carries the unit ("MB/s").
    def megabytes(bytes, unit: true)
      return NONE if bytes.nil?

      text = format("%.1f", bytes / 1e6)
      unit ? "#{text} MB" : text
    end

    # A rate (requests or messages per second) with one decimal: "1510.0".
    def rate(per_s)
      return NONE if per_s.nil?

      format("%.1f", per_s)
    end

    # A rate as a table column scans best: whole numbers from 100 up
    # ("1200"), one decimal below ("42.5").
    def rate_rounded(per_s)
      return NONE if per_s.nil?

      per_s >= 100 ? format("%.0f", per_s) : format("%.1f", per_s)
    end

    # A rate rounded to a whole number, with thousands separators: "3,985".
    def rate_grouped(per_s)
      return NONE if per_s.nil?

      per_s.round.to_s.gsub(/(\d)(?=(\d{3})+\z)/, "\\1,")
    end

    # A count rounded to a whole number, with thousands separators:
    # instructions per request, 193137.8 -> "193,138".
    def count_grouped(value)
      return NONE if value.nil?

      value.round.to_s.gsub(/(\d)(?=(\d{3})+\z)/, "\\1,")
    end

    # A ratio (B's median over A's) with three decimals: "1.200".
    def ratio(value)
      return NONE if value.nil?

      format("%.3f", value)
    end

    # A fraction as a percentage with +digits+ decimals (default 2):
    # 0.012 -> "1.20%".
    def percent(fraction, digits: 2)
      return NONE if fraction.nil?

      format("%.#{digits}f%%", fraction * 100)
    end

    # A fraction as a percentage without trailing zeros, for settings in
    # prose: 0.01 -> "1%", 0.005 -> "0.5%" (+digits+ decimals at most,
    # default 1).
    def percent_trimmed(fraction, digits: 1)
      return NONE if fraction.nil?

      "#{format("%.#{digits}f", fraction * 100).sub(/\.0+\z/, "")}%"
    end

    # A fraction as a percentage rounded to +digits+ decimals (default 2)
    # and printed as Ruby prints that Float: 0.01 -> "1.0%",
    # 0.0125 -> "1.25%".
    def percent_rounded(fraction, digits: 2)
      return NONE if fraction.nil?

      "#{(fraction * 100).round(digits)}%"
    end

    # A [low, high] interval, each end written by the Units formatter
    # named +formatter+ (:rate, :ratio, ...), joined by +separator+
    # (default " – "). NONE unless both ends are known.
    def interval(pair, formatter, separator: " – ")
      return NONE unless pair.is_a?(Array) && pair.size == 2 && pair.none?(&:nil?)

      "#{public_send(formatter, pair[0])}#{separator}#{public_send(formatter, pair[1])}"
    end

    # An interval as ± its half-width in percent of +center+ (one
    # decimal), easier to scan down a column than two numbers:
    # [990, 1010] around 1000 -> "±1.0%". NONE unless both are known
    # and the center is positive.
    def relative_interval(pair, center)
      return NONE unless pair.is_a?(Array) && pair.size == 2 && pair.none?(&:nil?) && center&.positive?

      format("±%.1f%%", (pair[1] - pair[0]) / 2.0 / center * 100)
    end

    # A whole number as written: 14 -> "14".
    def integer(value)
      value.nil? ? NONE : value.to_s
    end
  end
end
