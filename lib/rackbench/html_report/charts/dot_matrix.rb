# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      # The dimensions the dot matrix lays out itself; any other dimension
      # that varies (server, app, load.*, env.*) splits it into panels.
      MATRIX_DIMS = %w[ruby processes threads].freeze

      module_function

      # The Rails Ruby Bench dot matrix: rubies as columns, processes ×
      # threads as rows, one dot per configuration sized and coloured by
      # its median throughput, with the value written on the dot. One
      # panel per combination of the other varying dimensions. A
      # configuration without a median (every trial failed) keeps its cell,
      # marked "failed".
      def dot_matrix(doc)
        configs = doc.configs
        return nil if configs.none? { |c| c["rps_median"] }

        panel_dims = doc.dimensions - MATRIX_DIMS
        rows = configs.map { |c| matrix_row(doc, c, panel_dims) }
        layer = {
          width: { step: 110 }, height: { step: 64 },
          encoding: {
            x: { field: "ruby", type: "nominal", sort: rows.map { |r| r["ruby"] }.uniq,
                 axis: { orient: "top", labelAngle: 0, labelLimit: 200, title: "Ruby", domain: false, ticks: false } },
            y: { field: "shape", type: "ordinal", sort: shape_order(configs),
                 axis: { title: "processes × threads", domain: false, ticks: false } }
          },
          layer: [
            { transform: [{ filter: { field: "rps", valid: true } }],
              mark: { type: "circle", opacity: 0.9, stroke: "#ffffff", strokeWidth: 1 },
              encoding: { size: { field: "rps", type: "quantitative", legend: nil,
                                  scale: { zero: true, range: [0, 2600] } },
                          color: { field: "rps", type: "quantitative", title: doc.rate_unit,
                                   scale: { zero: false, range: ["#e3f1df", "#3f9fcf"] } },
                          tooltip: [{ field: "config", title: "configuration" },
                                    { field: "rps", title: "median #{doc.rate_unit}", format: ",.1f" }] } },
            { mark: { type: "text", fontSize: 11, fontWeight: "bold", color: "#1b1b1b" },
              encoding: { text: { field: "value" } } }
          ]
        }
        return layer.merge(data: { values: rows }) if panel_dims.empty?

        { data: { values: rows }, columns: 2,
          facet: { field: "panel", type: "nominal", title: nil, sort: rows.map { |r| r["panel"] }.uniq,
                   header: { labelLimit: 500, labelFontSize: 12 } },
          spec: layer }
      end

      def matrix_row(doc, config, panel_dims)
        dims = config["dims"] || {}
        { "config" => doc.name(config), "ruby" => (dims["ruby"] || "ruby").to_s, "shape" => shape(dims),
          "panel" => panel_dims.map { |d| "#{d}=#{dims[d]}" }.join(" · "),
          "rps" => config["rps_median"],
          "value" => config["rps_median"] ? Units.rate_grouped(config["rps_median"]) : "failed" }
      end

      # "2×5" for 2 processes of 5 threads each.
      def shape(dims)
        "#{dims["processes"] || "?"}×#{dims["threads"] || "?"}"
      end

      # Row order: fewest processes first, then fewest threads.
      def shape_order(configs)
        dims = configs.map { |c| c["dims"] || {} }
        dims.sort_by { |d| [d["processes"].to_i, d["threads"].to_i] }.map { |d| shape(d) }.uniq
      end
    end
  end
end
