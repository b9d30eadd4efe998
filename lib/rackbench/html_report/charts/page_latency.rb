# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      module_function

      # The page chart of a request list: one panel per configuration with
      # entries, one row per entry (page) in file order, a line from its
      # p50 to its p99 with a dot at each end, on one latency axis (log
      # scale) shared by every panel, so a slow page stands out however the
      # configurations differ. nil when no configuration has entries.
      def page_latency(doc)
        rows = doc.configs.flat_map do |c|
          Array(c["entries"]).flat_map { |entry| page_rows(doc.name(c), entry) }
        end
        return nil if rows.empty?

        pages = rows.map { |r| r["page"] }.uniq
        configs = rows.map { |r| r["config"] }.uniq
        y = { field: "page", type: "nominal", sort: pages, title: nil, axis: { labelLimit: 240 } }
        x_title = "latency (ms, log scale)"
        {
          data: { values: rows },
          facet: { row: { field: "config", type: "nominal", sort: configs, title: nil,
                          header: { labelAngle: 0, labelAlign: "left", labelLimit: 500, labelFontSize: 12 } } },
          spec: {
            width: 560, height: { step: 22 },
            layer: [
              { transform: [{ pivot: "percentile", value: "ms", groupby: %w[config page] }],
                mark: { type: "rule", strokeWidth: 2, color: "#9aa4ae" },
                encoding: { y: y, x: { field: "p50", type: "quantitative", scale: { type: "log" }, title: x_title },
                            x2: { field: "p99" } } },
              { mark: { type: "point", filled: true, size: 70 },
                encoding: {
                  y: y, x: { field: "ms", type: "quantitative", scale: { type: "log" }, title: x_title },
                  color: { field: "percentile", type: "nominal", title: "percentile",
                           scale: { domain: %w[p50 p99], range: ["#4c78a8", "#d1453b"] } },
                  tooltip: [{ field: "config", title: "configuration" }, { field: "page" }, { field: "percentile" },
                            { field: "latency" }, { field: "share", title: "share of the mix" }]
                } }
            ]
          },
          resolve: { scale: { x: "shared" } }
        }
      end

      # The p50 and p99 rows of one entry (none without latency).
      def page_rows(config_name, entry)
        latency = entry["latency_us"] || {}
        %w[p50 p99].filter_map do |p|
          us = latency[p]
          next unless us.is_a?(Numeric) && us.positive?

          { "config" => config_name, "page" => Report::EntryText.name(entry), "percentile" => p, "ms" => us / 1000.0,
            "latency" => Units.latency_us(us), "share" => Units.percent(entry["share"], digits: 1) }
        end
      end
    end
  end
end
