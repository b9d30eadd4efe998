# frozen_string_literal: true

module Rackbench
  module Publish
    # The Vega-Lite specification of one series on the site: each run's
    # median (a point) with its interval (a whisker) against the run's
    # date (or number, in order of revision), the level of each stretch
    # between steps (a dashed line), each step's range of runs shaded (red
    # when it made the figure worse, green when better), failed runs as
    # red crosses at the bottom, and around the newest level the band a
    # run must leave to be flagged (the series' threshold). Strings from
    # the store are data values and tooltips only, never Vega expressions.
    module TimelineChart
      COLORS = { "run" => "#4c78a8", "worse" => "#d1453b", "better" => "#2e9e44", "refuted" => "#e0a030",
                 "failed" => "#d1453b" }.freeze
      # How the legend names each kind of point.
      KINDS = { "run" => "run", "worse" => "first run after a regression", "better" => "first run after an improvement",
                "refuted" => "a step the runs after it refuted" }.freeze

      module_function

      # figure :: a figure of a timeline document ("points", "steps",
      #           "noise", "words"), its points aligned with +runs+
      # runs :: the runs of the timeline document (each with its "run" index)
      # :by_date :: x is the run's date (else its number)
      # :highlight :: [first, last] run indexes to outline (a regression's range)
      # :width, :height :: the chart's size in pixels
      def spec(figure, runs, by_date: true, highlight: nil, width: 880, height: 260)
        rows = point_rows(figure, runs, by_date)
        return nil if rows.empty?

        position = runs.to_h { |run| [run["run"], x_value(run, by_date)] }
        x = if by_date
              { field: "x", type: "temporal", title: "run started", axis: { format: "%Y-%m-%d", labelAngle: 0 } }
            else
              { field: "x", type: "quantitative", title: "run", axis: { format: "d", tickMinStep: 1 } }
            end
        y = { type: "quantitative", scale: { zero: false }, title: "#{figure["words"]} (median, CI)" }
        layers = [
          threshold_layer(figure, runs, position, x, y), ranges_layer(figure, position, x, highlight),
          levels_layer(figure, runs, position, x, y), whiskers_layer(rows, x, y), points_layer(rows, figure, x, y),
          failed_layer(figure, runs, rows, x, y)
        ].compact
        { width: width, height: height, layer: layers }
      end

      def x_value(run, by_date) = by_date ? run["created_at"] : run["run"] + 1

      def point_rows(figure, runs, by_date)
        kinds = {}
        figure["steps"].each do |s|
          kinds[s["run"]] = s["state"] == "refuted" ? "refuted" : (s["worse"] ? "worse" : "better")
        end
        figure["points"].each_with_index.filter_map do |point, i|
          next nil unless point && point["median"]

          run = runs[i]
          { "x" => x_value(run, by_date), "run" => run["run"] + 1, "median" => point["median"],
            "low" => point.dig("ci", 0), "high" => point.dig("ci", 1), "kind" => KINDS[kinds.fetch(run["run"], "run")],
            "date" => run["created_at"], "experiment" => run["experiment_id"], "labels" => run["labels_text"],
            "batches" => point["batches"], "failed" => point["failed"] }
        end
      end

      def whiskers_layer(rows, x, y)
        whiskers = rows.select { |r| r["low"] && r["high"] }
        return nil if whiskers.empty?

        { data: { values: whiskers }, mark: { type: "rule", strokeWidth: 1.5, color: "#666666" },
          encoding: { x: x, y: y.merge(field: "low"), y2: { field: "high" } } }
      end

      def points_layer(rows, figure, x, y)
        { data: { values: rows }, mark: { type: "point", filled: true, size: 36, opacity: 0.9 },
          encoding: { x: x, y: y.merge(field: "median"),
                      color: { field: "kind", type: "nominal", title: nil, legend: { orient: "bottom" },
                               scale: { domain: KINDS.values, range: COLORS.values_at(*KINDS.keys) } },
                      tooltip: [{ field: "run" }, { field: "experiment", title: "experiment id" }, { field: "date" },
                                { field: "labels", title: "labels and revisions" },
                                { field: "median", title: figure["words"], format: ",.4~r" },
                                { field: "low", title: "CI low", format: ",.4~r" },
                                { field: "high", title: "CI high", format: ",.4~r" },
                                { field: "batches", title: "ok batches" }, { field: "failed", title: "failed trials" }] } }
      end

      # Each step's range: from the last run before it may have happened to
      # the last run it may be at, one layer per colour (a colour scale of
      # their own would clash with the points').
      def ranges_layer(figure, position, x, highlight)
        ranges = figure["steps"].reject { |s| s["state"] == "refuted" }.filter_map do |s|
          from = position[s["first"] - 1] || position[s["first"]]
          to = position[s["last"]]
          from && to && { "from" => from, "to" => to, "kind" => s["worse"] ? "worse" : "better" }
        end
        if highlight
          from = position[highlight[0]] || position.values.first
          to = position[highlight[1]]
          ranges << { "from" => from, "to" => to, "kind" => "worse" } if from && to
        end
        layers = %w[worse better].filter_map do |kind|
          values = ranges.select { |r| r["kind"] == kind }
          next nil if values.empty?

          { data: { values: values }, mark: { type: "rect", opacity: 0.14, color: COLORS[kind] },
            encoding: { x: x.merge(field: "from"), x2: { field: "to" } } }
        end
        layers.empty? ? nil : { layer: layers }
      end

      # The level of each stretch of runs between steps: the geometric mean
      # of its medians (what the steps' sizes compare).
      def levels_layer(figure, runs, position, x, y)
        starts = [0, *figure["steps"].reject { |s| s["state"] == "refuted" }.map { |s| s["run"] - runs.first["run"] }]
                 .select { |i| i >= 0 && i < runs.size }.uniq.sort
        segments = starts.each_with_index.filter_map do |start, k|
          stop = (starts[k + 1] || runs.size) - 1
          valued = (start..stop).select { |i| figure["points"][i]&.fetch("median", nil) }
          next nil if valued.size < 2

          level = Math.exp(valued.sum { |i| Math.log(figure["points"][i]["median"]) } / valued.size)
          { "from" => position[runs[valued.first]["run"]], "to" => position[runs[valued.last]["run"]], "level" => level }
        end
        return nil if segments.empty?

        { data: { values: segments }, mark: { type: "rule", strokeDash: [4, 3], color: "#888888", strokeWidth: 1.5 },
          encoding: { x: x.merge(field: "from"), x2: { field: "to" }, y: y.merge(field: "level") } }
      end

      # The newest level widened by the series' threshold: a run outside
      # it is flagged from one night.
      def threshold_layer(figure, runs, position, x, y)
        threshold = figure.dig("noise", "threshold")
        last_step = figure["steps"].reject { |s| s["state"] == "refuted" }.map { |s| s["run"] }.max
        start = last_step ? last_step - runs.first["run"] : 0
        valued = (start.clamp(0, runs.size - 1)...runs.size).select { |i| figure["points"][i]&.fetch("median", nil) }
        return nil if threshold.nil? || valued.size < 2

        level = Math.exp(valued.sum { |i| Math.log(figure["points"][i]["median"]) } / valued.size)
        band = { "from" => position[runs[valued.first]["run"]], "to" => position[runs[valued.last]["run"]],
                 "low" => level / (1 + threshold), "high" => level * (1 + threshold) }
        { data: { values: [band] }, mark: { type: "rect", color: "#9aa4ae", opacity: 0.16 },
          encoding: { x: x.merge(field: "from"), x2: { field: "to" }, y: y.merge(field: "low"), y2: { field: "high" } } }
      end

      # Runs that measured nothing of this figure (a build that failed, every
      # trial failed), as crosses at the lowest median.
      def failed_layer(figure, runs, rows, x, y)
        bottom = rows.map { |r| r["low"] || r["median"] }.min
        failed = runs.each_with_index.filter_map do |run, i|
          point = figure["points"][i]
          next nil unless run["status"] == "failed" || (point && point["median"].nil?)

          reason = run["failure"] ? run["failure"]["reason"].to_s : "every trial failed (#{point && point["failed"]})"
          { "x" => x_value(run, x[:type] == "temporal"), "y" => bottom, "date" => run["created_at"], "experiment" => run["experiment_id"],
            "labels" => run["labels_text"], "why" => reason, "run" => run["run"] + 1 }
        end
        return nil if failed.empty?

        { data: { values: failed }, mark: { type: "point", shape: "cross", size: 90, filled: true, color: COLORS["failed"] },
          encoding: { x: x, y: y.merge(field: "y"),
                      tooltip: [{ field: "run" }, { field: "date" }, { field: "experiment", title: "experiment id" },
                                { field: "labels", title: "labels and revisions" }, { field: "why", title: "failed" }] } }
      end
    end
  end
end
