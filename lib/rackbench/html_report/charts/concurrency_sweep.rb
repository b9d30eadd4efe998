# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      module_function

      # The sweep section's chart (not one of #all: drawn only when the
      # document has a "concurrency_sweep", Report::ConcurrencySweep).
      def sweep
        Chart.new(id: "concurrency-sweep", title: "Latency and throughput against connections",
                  builder: :concurrency_sweep,
                  how_to_read: "Top: p50 (solid), p95 (dashed) and p99 (dotted) latency, log scale, against the " \
                               "number of connections (log scale), one colour per configuration; the vertical " \
                               "bars span the lowest to the highest batch. Bottom: median throughput with its " \
                               "95% interval. Where throughput stops growing and latency climbs, the server is " \
                               "saturated: more connections only queue.",
                  empty_text: "No configuration has a latency distribution.")
      end

      # Latency percentiles (top) and throughput (bottom) against
      # connections, one colour per sweep, from the document's
      # "concurrency_sweep"; nil when it has no point with a latency.
      def concurrency_sweep(doc)
        sweeps = Array(doc.raw["concurrency_sweep"])
        latency = sweeps.flat_map { |sweep| sweep_latency_rows(sweep) }
        return nil if latency.empty?

        throughput = sweeps.flat_map { |sweep| sweep_rate_rows(sweep) }
        x = { field: "connections", type: "quantitative", scale: { type: "log", base: 2 }, title: "connections" }
        color = { field: "config", type: "nominal", sort: sweeps.map { |s| s["label"] }, legend: config_legend }
        # A layer whose filter leaves no row gives Vega an empty extent
        # (a warning in the page): the range and interval layers are drawn
        # only where some point has one.
        {
          data: { values: latency + throughput },
          vconcat: [sweep_latency_panel(x, color, ranges: latency.any? { |r| r["low_ms"] }),
                    sweep_rate_panel(x, color, doc.rate_unit, intervals: throughput.any? { |r| r["low"] })]
        }
      end

      def sweep_latency_rows(sweep)
        Array(sweep["points"]).flat_map do |point|
          Report::ConcurrencySweep::PERCENTILES.filter_map do |p|
            us = point.dig("latency_us", "p#{p}")
            next unless us.is_a?(Numeric) && us.positive?

            low, high = point.dig("latency_us_batch_range", "p#{p}")
            { "panel" => "latency", "config" => sweep["label"], "connections" => point["connections"],
              "percentile" => "p#{p}", "ms" => us / 1000.0, "low_ms" => low && low / 1000.0,
              "high_ms" => high && high / 1000.0, "latency" => Units.latency_us(us) }
          end
        end
      end

      def sweep_rate_rows(sweep)
        Array(sweep["points"]).filter_map do |point|
          next unless point["rps_median"]

          low, high = point["rps_ci95"]
          { "panel" => "rate", "config" => sweep["label"], "connections" => point["connections"],
            "rps" => point["rps_median"], "low" => low, "high" => high }
        end
      end

      def sweep_latency_panel(x, color, ranges:)
        dash = { field: "percentile", type: "nominal", title: "percentile", sort: %w[p50 p95 p99],
                 scale: { domain: %w[p50 p95 p99], range: [[1, 0], [6, 3], [2, 2]] } }
        y = { field: "ms", type: "quantitative", scale: { type: "log" }, title: "latency (ms, log scale)" }
        {
          width: 640, height: 260, transform: [{ filter: { field: "panel", equal: "latency" } }],
          layer: [
            { mark: { type: "line", point: true },
              encoding: { x: x, y: y, color: color, strokeDash: dash,
                          tooltip: [{ field: "config", title: "configuration" }, { field: "connections" },
                                    { field: "percentile" }, { field: "latency" }] } },
            *([{ transform: [{ filter: "isValid(datum.low_ms)" }], mark: { type: "rule" },
                 encoding: { x: x, y: { field: "low_ms", type: "quantitative" }, y2: { field: "high_ms" }, color: color } }] if ranges)
          ]
        }
      end

      def sweep_rate_panel(x, color, rate_unit, intervals:)
        y = { field: "rps", type: "quantitative", title: "median #{rate_unit}" }
        {
          width: 640, height: 200, transform: [{ filter: { field: "panel", equal: "rate" } }],
          layer: [
            { mark: { type: "line", point: true },
              encoding: { x: x, y: y, color: color,
                          tooltip: [{ field: "config", title: "configuration" }, { field: "connections" },
                                    { field: "rps", title: "median #{rate_unit}", format: ",.1f" }] } },
            *([{ transform: [{ filter: "isValid(datum.low)" }], mark: { type: "rule" },
                 encoding: { x: x, y: { field: "low", type: "quantitative" }, y2: { field: "high" }, color: color } }] if intervals)
          ]
        }
      end
    end
  end
end
