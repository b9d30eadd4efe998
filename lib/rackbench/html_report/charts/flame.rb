# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      # A configuration's profile as an icicle chart (a flame graph upside
      # down): the outermost frame on top, each frame as wide as the
      # samples under it, its callees below it. The layout is computed in
      # Ruby (Profile::FlameTree: x0, x1, depth), so the chart is plain
      # Vega-Lite rectangles drawn by the libraries the page already
      # inlines, and it works offline.
      module Flame
        WIDTH_PX = 900
        ROW_PX = 16
        # Roughly one character of the 10 px label font.
        CHAR_PX = 6.2
        # A frame narrower than this gets no label (its tooltip has it).
        MIN_LABEL_PX = 30

        module_function

        # The Vega-Lite spec for profile, one entry of the report document's
        # "profiles" (Report::Profiles#to_a), or nil when it has no samples.
        def spec(profile)
          nodes = Array(profile["flame"])
          total = nodes.first && nodes.first["total"].to_i
          return nil if total.nil? || total.zero?

          rows = nodes.map { |node| row(node, total) }
          depth = rows.map { |r| r["depth"] }.max
          {
            width: WIDTH_PX, height: ROW_PX * (depth + 1), data: { values: rows },
            encoding: {
              x: { field: "x0", type: "quantitative", scale: { domain: [0, total], nice: false, zero: true },
                   axis: nil },
              y: { field: "depth", type: "ordinal", axis: nil, scale: { paddingInner: 0.08 } }
            },
            layer: [
              { mark: { type: "rect", stroke: "#ffffff", strokeWidth: 0.5 },
                encoding: {
                  x2: { field: "x1" },
                  color: { field: "library", type: "nominal", title: "code of", legend: { orient: "bottom", columns: 6 } },
                  tooltip: [{ field: "name", title: "frame" }, { field: "file" }, { field: "library", title: "code of" },
                            { field: "total_share", title: "total", format: ".1%" },
                            { field: "self_share", title: "self", format: ".1%" },
                            { field: "total", title: "samples (total)", format: "," },
                            { field: "self", title: "samples (self)", format: "," }]
                } },
              { mark: { type: "text", align: "left", baseline: "middle", dx: 3, fontSize: 10, color: "#111111" },
                encoding: { text: { field: "label" } } }
            ]
          }
        end

        def row(node, total)
          width_px = (node["x1"] - node["x0"]) * WIDTH_PX.fdiv(total)
          { "name" => node["name"], "file" => node["file"].to_s, "library" => library(node), "depth" => node["depth"],
            "x0" => node["x0"], "x1" => node["x1"], "self" => node["self"], "total" => node["total"],
            "self_share" => node["self"].fdiv(total), "total_share" => node["total"].fdiv(total),
            "label" => label(node["name"], width_px) }
        end

        # The name cut to what fits in width_px, "" when nothing useful does.
        def label(name, width_px)
          return "" if width_px < MIN_LABEL_PX

          chars = ((width_px - 6) / CHAR_PX).floor
          name.size <= chars ? name : "#{name[0, [chars - 1, 0].max]}…"
        end

        # Whose code a frame is, for its colour: a gem's name, "ruby" for
        # the standard library, "C" for a C function, "app" otherwise.
        def library(node)
          file = node["file"].to_s
          return "all" if node["parent"].nil?
          return "C" if file == "<cfunc>" || file.empty?
          return Regexp.last_match(1) if file =~ %r{/gems/([^/]+?)-\d[^/]*/}
          return "ruby" if file.start_with?(RbConfig::CONFIG["rubylibprefix"].to_s) || file.start_with?("<internal:")

          "app"
        end
      end
    end
  end
end
