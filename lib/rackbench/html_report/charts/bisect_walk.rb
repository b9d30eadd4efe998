# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      # How a commit measured by a bisection is drawn: on the good side of
      # every step, on the bad side of the last, or between two steps.
      BISECT_SIDE_COLORS = { "good" => "#2e9e44", "bad" => "#d1453b", "between steps" => "#f58518" }.freeze

      module_function

      # The figure along the commits a bisection walked (the bisect
      # document, Bisect::Result#to_h): each measured commit's median (a
      # point, coloured by its side of the steps found) with its interval
      # (a whisker) against its place in the history, its first
      # configuration's; a red rule before each step's first bad commit;
      # the commits skipped as grey crosses on the axis. nil when no commit
      # has a median.
      def bisect_walk(doc)
        rows = doc["measured"].filter_map do |row|
          config = Array(row["configs"]).first
          next nil unless config && config["median"]

          { "index" => row["index"], "commit" => row["short"], "subject" => row["subject"],
            "median" => config["median"], "low" => config.dig("ci", 0), "high" => config.dig("ci", 1),
            "side" => row["side"].to_s.start_with?("after step") ? "between steps" : row["side"],
            "against_good" => row.dig("against_good", "text") || "the good commit", "batches" => row["batches"] }
        end
        return nil if rows.empty?

        x = { field: "index", type: "quantitative", title: "commit (0 = good, #{doc["commits"]} = bad)",
              axis: { tickMinStep: 1, format: "d" }, scale: { domain: [-0.5, doc["commits"] + 0.5], nice: false } }
        y = { type: "quantitative", scale: { zero: false },
              title: "#{doc["settings"]["figure_words"]} (median of batches, CI)" }
        layers = [bisect_steps(doc, x), bisect_whiskers(rows, x, y), bisect_points(rows, x, y),
                  bisect_skipped(doc, x)].compact
        { width: 640, height: 280, layer: layers }
      end

      def bisect_points(rows, x, y)
        { data: { values: rows }, mark: { type: "point", filled: true, size: 90, opacity: 1 },
          encoding: { x: x, y: y.merge(field: "median"),
                      color: { field: "side", type: "nominal", title: "side",
                               scale: { domain: BISECT_SIDE_COLORS.keys, range: BISECT_SIDE_COLORS.values } },
                      tooltip: [{ field: "index", title: "#" }, { field: "commit" }, { field: "subject" },
                                { field: "median", format: ",.1f" }, { field: "low", title: "CI low", format: ",.1f" },
                                { field: "high", title: "CI high", format: ",.1f" },
                                { field: "against_good", title: "against good" }, { field: "batches" }] } }
      end

      def bisect_whiskers(rows, x, y)
        whiskers = rows.select { |r| r["low"] && r["high"] }
        return nil if whiskers.empty?

        { data: { values: whiskers }, mark: { type: "rule", strokeWidth: 2, color: "#555555" },
          encoding: { x: x, y: y.merge(field: "low"), y2: { field: "high" } } }
      end

      def bisect_steps(doc, x)
        steps = doc["steps"].map do |step|
          { "at" => doc["measured"].find { |r| r["commit"] == step["first_bad"]["commit"] }&.fetch("index").to_f - 0.5,
            "label" => "step: #{step["first_bad"]["short"]}" }
        end
        return nil if steps.empty?

        { data: { values: steps },
          layer: [{ mark: { type: "rule", color: "#d1453b", strokeDash: [6, 4] }, encoding: { x: x.merge(field: "at") } },
                  { mark: { type: "text", align: "left", dx: 4, baseline: "top", color: "#d1453b" },
                    encoding: { x: x.merge(field: "at"), y: { value: 4 }, text: { field: "label" } } }] }
      end

      def bisect_skipped(doc, x)
        skipped = doc["measured"].select { |r| r["median"].nil? }
                                 .map { |r| { "index" => r["index"], "commit" => r["short"], "reason" => r["reason"].to_s } }
        return nil if skipped.empty?

        { data: { values: skipped }, mark: { type: "point", shape: "cross", size: 120, color: "#8c8c8c", strokeWidth: 2 },
          encoding: { x: x, y: { value: 270 },
                      tooltip: [{ field: "index", title: "#" }, { field: "commit" }, { field: "reason", title: "skipped" }] } }
      end
    end
  end
end
