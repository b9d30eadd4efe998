# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      module_function

      # The WebSocket section's chart (not one of #all: drawn only when
      # the report has WebSocket configurations whose clients vary,
      # #ws_round_trips).
      def ws_chart
        Chart.new(id: "ws-round-trips", title: "Round trips against clients",
                  builder: :ws_round_trips,
                  how_to_read: "p50 (solid) and p95 (dashed) round trip, log scale, against the clients " \
                               "connected, one colour per configuration (every dimension but the clients): a " \
                               "broadcast's from its send to its last client's receipt, an echo's from the send " \
                               "to its return. Where the line turns up, the server has stopped keeping up with " \
                               "its clients; the delivery and the failures beside it say whether it also lost " \
                               "messages or connections.",
                  empty_text: "No WebSocket configuration has a round trip.")
      end

      # p50 and p95 round trips against clients, one line per series of
      # configurations that differ in their clients only; nil unless some
      # series has two points or more.
      def ws_round_trips(doc)
        rows = ws_rows(doc)
        return nil unless rows.group_by { |r| r["config"] }.any? { |_, points| points.map { |p| p["clients"] }.uniq.size > 1 }

        x = { field: "clients", type: "quantitative", scale: { type: "log", base: 2 }, title: "clients connected" }
        {
          data: { values: rows }, width: 640, height: 320,
          mark: { type: "line", point: true },
          encoding: {
            x: x,
            y: { field: "ms", type: "quantitative", scale: { type: "log" }, title: "round trip (ms, log scale)" },
            color: { field: "config", type: "nominal", title: "configuration", legend: config_legend },
            strokeDash: { field: "percentile", type: "nominal", title: "percentile",
                          scale: { domain: %w[p50 p95], range: [[1, 0], [6, 4]] } },
            detail: { field: "percentile" },
            tooltip: [{ field: "config" }, { field: "clients", title: "clients" }, { field: "percentile" },
                      { field: "latency" }, { field: "delivery" }]
          }
        }
      end

      def ws_rows(doc)
        doc.configs.flat_map do |config|
          clients = config["ws_clients"]
          next [] unless clients.is_a?(Numeric) && clients.positive?

          series = (config["dims"] || {}).reject { |dim, _| dim == "load.clients" }
          label = series.select { |dim, _| doc.dimensions.include?(dim) && varying?(doc, dim) }
                        .map { |_, value| Report.format_dim(value) }.join(" · ")
          { "p50" => config.dig("latency_us", "p50"), "p95" => config["rtt_p95_us"] }.filter_map do |key, us|
            next unless us.is_a?(Numeric) && us.positive?

            { "config" => label.empty? ? "all" : label, "clients" => clients, "percentile" => key, "ms" => us / 1000.0,
              "latency" => Units.latency_us(us),
              "delivery" => config["delivery_ratio"] ? Units.percent(config["delivery_ratio"]) : Units::NONE }
          end
        end
      end

      # Whether the configurations take more than one value of dim.
      def varying?(doc, dim)
        doc.configs.map { |c| (c["dims"] || {})[dim] }.uniq.size > 1
      end
    end
  end
end
