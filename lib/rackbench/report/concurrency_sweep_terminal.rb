# frozen_string_literal: true


module Rackbench
  class Report
    # The "Latency against connections" section of the terminal report:
    # one table per sweep (Report::ConcurrencySweep), one row per number of
    # connections: median throughput and its interval, then p50, p95 and
    # p99 of the merged histograms, each with its range over the batches
    # when there are several.
    class ConcurrencySweepTerminal
      HEADINGS = ["connections", "median req/s", "95% CI", "p50", "p95", "p99", "batches"].freeze

      # sweeps :: the report document's "concurrency_sweep" (or nil)
      # :rate_unit :: what throughput counts (default: "req/s")
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(sweeps, rate_unit: "req/s", width: nil)
        @sweeps = Array(sweeps)
        @rate_unit = rate_unit
        @width = width
      end

      # The section as text, or nil without a sweep.
      def render
        return nil if @sweeps.empty?

        ["Latency and throughput against connections (percentiles of the merged histograms; " \
         "[lowest–highest batch] with several batches):",
         *@sweeps.map { |sweep| table(sweep) }].join("\n")
      end

      private

      def table(sweep)
        headings = HEADINGS.map { |h| h == "median req/s" ? "median #{@rate_unit}" : h }
        rows = sweep["points"].map do |point|
          [point["connections"], point["rps_median"] ? Units.rate_rounded(point["rps_median"]) : Units::NONE,
           Units.interval(point["rps_ci95"], :rate_rounded, separator: "–"),
           *ConcurrencySweep::PERCENTILES.map { |p| latency(point, "p#{p}") }, point["batches"]]
        end
        Text::Table.new(title: sweep["label"], headings: headings, rows: rows, right: (0...headings.size).to_a,
                        width: @width).to_s
      end

      def latency(point, key)
        value = point.dig("latency_us", key)
        return Units::NONE unless value

        range = point.dig("latency_us_batch_range", key)
        range ? "#{Units.latency_us(value)} [#{Units.latency_us(range[0])}–#{Units.latency_us(range[1])}]" : Units.latency_us(value)
      end
    end
  end
end
