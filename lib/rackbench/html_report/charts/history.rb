# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      # How a run is drawn in a history: an ordinary run, or a change point.
      HISTORY_COLORS = { "run" => "#4c78a8", "change point" => "#d1453b" }.freeze

      module_function

      # One configuration of a history document (Series#to_h): each run's
      # median (a point) with its interval (a whisker) against the run's
      # number, change points in red, and the band each change point left
      # (the union of the intervals of the runs before it, since the last
      # change) as a grey box over those runs. nil when no run has a median.
      def history(doc, config)
        figure = doc["figure"]
        runs = doc["runs"]
        changes = config["change_points"].to_h { |c| [c["run"], c] }
        rows = config["points"].each_with_index.filter_map do |point, i|
          next nil unless point && point["median"]

          run = runs[i]
          { "run" => i + 1, "median" => point["median"], "low" => point.dig("ci", 0), "high" => point.dig("ci", 1),
            "kind" => changes[i] ? "change point" : "run", "labels" => run["labels_text"], "date" => run["created_at"],
            "experiment" => run["experiment_id"], "batches" => point["batches"] }
        end
        return nil if rows.empty?

        x = { field: "run", type: "quantitative", axis: { tickMinStep: 1, format: "d", title: "run" },
              scale: { domain: [0.5, runs.size + 0.5], nice: false } }
        y = { type: "quantitative", scale: { zero: false }, title: "#{figure["words"]} (median of batches, CI)" }
        layers = [history_bands(config, x, y), history_whiskers(rows, x, y)].compact
        layers << { data: { values: rows }, mark: { type: "point", filled: true, size: 90, opacity: 1 },
                    encoding: { x: x, y: y.merge(field: "median"),
                                color: { field: "kind", type: "nominal", title: nil,
                                         scale: { domain: HISTORY_COLORS.keys, range: HISTORY_COLORS.values } },
                                tooltip: [{ field: "run" }, { field: "experiment", title: "experiment id" },
                                          { field: "date" }, { field: "labels", title: "labels and revisions" },
                                          { field: "median", title: figure["words"], format: ",.1f" },
                                          { field: "low", title: "CI low", format: ",.1f" },
                                          { field: "high", title: "CI high", format: ",.1f" },
                                          { field: "batches", title: "ok batches" }] } }
        { width: 640, height: 260, layer: layers }
      end

      def history_whiskers(rows, x, y)
        whiskers = rows.select { |r| r["low"] && r["high"] }
        return nil if whiskers.empty?

        { data: { values: whiskers }, mark: { type: "rule", strokeWidth: 2, color: "#555555" },
          encoding: { x: x, y: y.merge(field: "low"), y2: { field: "high" } } }
      end

      def history_bands(config, x, y)
        bands = config["change_points"].map do |c|
          first, last = c["band_runs"].minmax
          { "from" => first + 1 - 0.35, "to" => last + 1 + 0.35, "low" => c["band"][0], "high" => c["band"][1] }
        end
        return nil if bands.empty?

        { data: { values: bands }, mark: { type: "rect", color: "#bbbbbb", opacity: 0.35 },
          encoding: { x: x.merge(field: "from"), x2: { field: "to" }, y: y.merge(field: "low"),
                      y2: { field: "high" } } }
      end
    end
  end
end
