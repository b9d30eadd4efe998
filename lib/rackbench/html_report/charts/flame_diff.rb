# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      # A differential flame graph as an icicle (Report::FlameDiff's
      # nodes): laid out as B's, each frame as wide as B's amount under it,
      # coloured by what changed there against A: red where B does more,
      # blue where it does less, grey where they agree. The colour scale is
      # symmetric around 0 and as wide as the largest change, so the path
      # that moved the most is the deepest colour. Rectangles computed in
      # Ruby, drawn by the libraries the page inlines, offline.
      module FlameDiff
        WIDTH_PX = 900
        ROW_PX = 16
        COLORS = ["#2166ac", "#92c5de", "#eeeeee", "#f4a582", "#b2182b"].freeze

        module_function

        # The Vega-Lite spec for +nodes+ (FlameDiff.nodes, as the document
        # holds them), amounts in +unit+ (its words, for the tooltips), or
        # nil without any.
        def spec(nodes, unit:)
          nodes = Array(nodes)
          total = nodes.first && nodes.first["b"].to_f
          return nil if total.nil? || total <= 0

          rows = nodes.map { |node| row(node, total) }
          reach = [rows.map { |r| r["delta"].abs }.max, 1e-9].max
          {
            width: WIDTH_PX, height: ROW_PX * (rows.map { |r| r["depth"] }.max + 1), data: { values: rows },
            encoding: {
              x: { field: "x0", type: "quantitative", scale: { domain: [0, total], nice: false, zero: true }, axis: nil },
              y: { field: "depth", type: "ordinal", axis: nil, scale: { paddingInner: 0.08 } }
            },
            layer: [
              { mark: { type: "rect", stroke: "#ffffff", strokeWidth: 0.5 },
                encoding: {
                  x2: { field: "x1" },
                  color: { field: "delta", type: "quantitative", title: "B − A (#{unit})",
                           scale: { domain: [-reach, -reach / 2, 0, reach / 2, reach], range: COLORS },
                           legend: { orient: "bottom", gradientLength: 300 } },
                  tooltip: [{ field: "name", title: "frame" }, { field: "object", title: "in" },
                            { field: "a", title: "A (#{unit})", format: ",.1f" },
                            { field: "b", title: "B (#{unit})", format: ",.1f" },
                            { field: "delta", title: "B − A", format: "+,.1f" },
                            { field: "delta_share", title: "of B's total", format: "+.2%" }]
                } },
              { mark: { type: "text", align: "left", baseline: "middle", dx: 3, fontSize: 10, color: "#111111" },
                encoding: { text: { field: "label" } } }
            ]
          }
        end

        def row(node, total)
          width_px = (node["x1"] - node["x0"]) * WIDTH_PX.fdiv(total)
          { "name" => node["name"].to_s, "object" => node["object"].to_s, "depth" => node["depth"],
            "x0" => node["x0"], "x1" => node["x1"], "a" => node["a"], "b" => node["b"], "delta" => node["delta"],
            "delta_share" => node["delta"] / total, "label" => Flame.label(node["name"].to_s, width_px) }
        end
      end
    end
  end
end
