# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      # Colours of the latency percentiles on the capacity curve.
      CAPACITY_PERCENTILE_COLORS = { "p50" => "#4c78a8", "p95" => "#f58518", "p99" => "#d1453b" }.freeze
      # How a step's verdict is drawn: filled circle (pass), filled triangle
      # (fail); an invalid step is a grey cross, on no line.
      CAPACITY_STATUS_SHAPES = { "pass" => "circle", "fail" => "triangle-up", "invalid" => "cross" }.freeze

      module_function

      # The latency-throughput curve ("hockey stick") of one configuration
      # of a capacity document (Summary#to_h's configs entry): p50, p95 and
      # p99 (ms, log scale) against the rate asked, one point per valid
      # step, lines through the median of each rate's steps; invalid steps
      # as grey crosses at their p99 (they are on no line: nothing is
      # concluded from them); the target as a horizontal rule, the answer
      # as a vertical one. nil when the configuration has no step with a
      # latency.
      def capacity_curve(config, settings)
        steps = config["searches"].flat_map { |s| s["steps"].map { |step| step.merge("batch" => s["batch"]) } }
        points = steps.flat_map { |step| step_points(step) }
        return nil if points.empty?

        valid = points.reject { |p| p["status"] == "invalid" }
        unit = settings["unit"] || "req/s" # a broadcast's search steps clients
        layers = [median_lines(valid, unit), step_marks(valid, unit), invalid_marks(points, unit), target_rule(settings)]
        layers << answer_rule(config, unit) if config["capacity_rps"]
        { width: 640, height: 300, layer: layers.compact,
          resolve: { scale: { color: "independent", shape: "independent" } } }
      end

      def step_points(step)
        latency = step["latency_us"] || {}
        CAPACITY_PERCENTILE_COLORS.keys.filter_map do |key|
          us = latency[key]
          next nil unless us.is_a?(Numeric) && us.positive?

          { "rate" => step["rate"], "percentile" => key, "ms" => us / 1000.0, "status" => step["status"],
            "batch" => step["batch"], "step" => step["index"], "phase" => step["phase"],
            "latency" => Units.latency_us(us), "reason" => step["reason"].to_s }
        end
      end

      def median_lines(valid, unit)
        rows = valid.group_by { |p| [p["percentile"], p["rate"]] }.map do |(key, rate), group|
          { "rate" => rate, "percentile" => key, "ms" => Stats.median(group.map { |p| p["ms"] }) }
        end
        return nil if rows.empty?

        { data: { values: rows }, mark: { type: "line" },
          encoding: { x: rate_axis(unit), y: latency_axis, color: percentile_color,
                      order: { field: "rate", type: "quantitative" } } }
      end

      def step_marks(valid, unit)
        return nil if valid.empty?

        { data: { values: valid }, mark: { type: "point", filled: true, size: 60 },
          encoding: { x: rate_axis(unit), y: latency_axis, color: percentile_color.merge(legend: nil),
                      shape: { field: "status", type: "nominal", title: "step",
                               scale: { domain: %w[pass fail], range: CAPACITY_STATUS_SHAPES.values_at("pass", "fail") } },
                      tooltip: step_tooltip(unit) } }
      end

      def invalid_marks(points, unit)
        invalid = points.select { |p| p["status"] == "invalid" && p["percentile"] == "p99" }
        return nil if invalid.empty?

        { data: { values: invalid }, mark: { type: "point", size: 120, color: "#8c8c8c", strokeWidth: 2 },
          encoding: { x: rate_axis(unit), y: latency_axis,
                      shape: { field: "status", type: "nominal", title: "not concluded from",
                               scale: { domain: ["invalid"], range: [CAPACITY_STATUS_SHAPES["invalid"]] } },
                      tooltip: step_tooltip(unit) + [{ field: "reason", title: "invalid" }] } }
      end

      def target_rule(settings)
        { data: { values: [{ "ms" => settings["target_us"] / 1000.0,
                             "label" => "target #{settings["percentile"]} #{Units.latency_us(settings["target_us"])}" }] },
          layer: [{ mark: { type: "rule", color: "#d1453b", strokeDash: [6, 4] },
                    encoding: { y: { field: "ms", type: "quantitative" } } },
                  { mark: { type: "text", align: "left", dx: 4, dy: -6, color: "#d1453b" },
                    encoding: { y: { field: "ms", type: "quantitative" }, x: { value: 0 }, text: { field: "label" } } }] }
      end

      def answer_rule(config, unit)
        label = "capacity #{Units.rate_rounded(config["capacity_rps"])} #{unit}"
        { data: { values: [{ "rate" => config["capacity_rps"], "label" => label }] },
          layer: [{ mark: { type: "rule", color: "#2e9e44", strokeWidth: 2 },
                    encoding: { x: { field: "rate", type: "quantitative" } } },
                  { mark: { type: "text", align: "right", dx: -4, baseline: "top", color: "#2e9e44" },
                    encoding: { x: { field: "rate", type: "quantitative" }, y: { value: 4 }, text: { field: "label" } } }] }
      end

      def rate_axis(unit)
        title = unit == "clients" ? "subscribed clients" : "offered rate (req/s, open loop)"
        { field: "rate", type: "quantitative", title: title, scale: { zero: false, padding: 12 } }
      end

      def latency_axis
        { field: "ms", type: "quantitative", title: "latency (ms, log scale)", scale: { type: "log" } }
      end

      def percentile_color
        { field: "percentile", type: "nominal", title: "percentile",
          scale: { domain: CAPACITY_PERCENTILE_COLORS.keys, range: CAPACITY_PERCENTILE_COLORS.values } }
      end

      def step_tooltip(unit)
        [{ field: "rate", title: unit }, { field: "percentile" }, { field: "latency" }, { field: "status" },
         { field: "phase" }, { field: "batch" }, { field: "step" }]
      end
    end
  end
end
