# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # Numbers as the tables show them; nil (unknown) is always "-".
    module Numbers
      NONE = "-"

      module_function

      def rps(value)
        value ? format("%.1f", value) : NONE
      end

      # Throughput rounded to whole requests, with thousands separators.
      def rps_whole(value)
        return NONE unless value

        value.round.to_s.gsub(/(\d)(?=(\d{3})+\z)/, "\\1,")
      end

      def ratio(value)
        value ? format("%.3f", value) : NONE
      end

      # A [low, high] pair formatted with +formatter+ (a method name of
      # this module), or "-" when the interval is unknown.
      def interval(pair, formatter)
        return NONE unless pair.is_a?(Array) && pair.size == 2 && pair.none?(&:nil?)

        "#{send(formatter, pair[0])} – #{send(formatter, pair[1])}"
      end

      def latency_us(value)
        value ? LoadSummary.format_us(value) : NONE
      end

      def megabytes(bytes)
        bytes ? format("%.1f MB", bytes / 1e6) : NONE
      end

      # A fraction (0.012) as a percentage ("1.20%").
      def percent(fraction)
        fraction ? format("%.2f%%", fraction * 100) : NONE
      end

      def integer(value)
        value.nil? ? NONE : value.to_s
      end
    end
  end
end
