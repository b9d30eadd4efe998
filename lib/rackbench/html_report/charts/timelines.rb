# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      module_function

      # Requests per second over time for every ok trial, one line per
      # trial coloured by configuration. The measured window starts at 0;
      # the warmup is placed before it at negative seconds and shaded, so a
      # throughput still climbing at 0 shows a warmup too short. With many
      # configurations each gets a small panel of its own.
      def timelines(doc)
        rows = doc.ok_trials.flat_map { |trial| timeline_rows(doc, trial) }
        return nil if rows.empty?

        configs = rows.map { |r| r["config"] }.uniq
        layers = [timeline_line_layer(doc, configs.size <= CROWDED_CONFIGS)]
        layers.unshift(warmup_band_layer) if rows.any? { |r| r["phase"] == "warmup" }
        if configs.size <= CROWDED_CONFIGS
          { width: 640, height: 280, data: { values: rows }, layer: layers }
        else
          { data: { values: rows }, columns: 3,
            facet: { field: "config", type: "nominal", sort: doc.names, title: nil,
                     header: { labelLimit: 260, labelFontSize: 11 } },
            spec: { width: 230, height: 110, layer: layers } }
        end
      end

      # The points of one trial: warmup seconds first (at negative time),
      # then the measured window.
      def timeline_rows(doc, trial)
        config = doc.name_for_id(trial["config_id"])
        warmup = Array(trial["warmup_timeline"])
        warmup_s = trial["warmup_s"].is_a?(Numeric) ? trial["warmup_s"] : warmup.size
        # Rows carry the band's edges so the band layer can draw it per
        # panel with an aggregate, without data of its own.
        base = { "config" => config, "trial" => "#{config} · batch #{trial["batch"]}",
                 "band_from" => -warmup_s, "band_to" => 0 }
        points = per_second(warmup, warmup_s).map { |t, rate, e| [t - warmup_s, rate, e, "warmup"] } +
                 per_second(trial["timeline"], trial["measure_s"]).map { |t, rate, e| [t, rate, e, "measured"] }
        points.map do |t, rate, entry, phase|
          base.merge("t" => t, "rps" => rate.round(1), "phase" => phase, "errors" => entry["errors"])
        end
      end

      # [[second, requests/s, entry], ...] of a timeline whose entries
      # each count one second from the window's start. The engine's
      # timeline may end with a bucket at or past the window's end that
      # only holds the responses still in flight when it closed: it is
      # dropped, and a last bucket cut short by the window (a 2.5 s
      # window's third second) is scaled to a full second.
      def per_second(timeline, window_s)
        Array(timeline).filter_map do |entry|
          next unless entry.is_a?(Hash) && entry["requests"].is_a?(Numeric) && entry["second"].is_a?(Numeric)

          second = entry["second"]
          length_s = window_s.is_a?(Numeric) ? [window_s - second, 1.0].min : 1.0
          next if length_s <= 0

          [second.to_f, entry["requests"] / length_s, entry]
        end
      end

      def timeline_line_layer(doc, legend)
        color = { field: "config", type: "nominal", sort: doc.names,
                  legend: legend ? config_legend : nil }
        layer = {
          mark: { type: "line", strokeWidth: 1.5, point: { size: 14 } },
          encoding: {
            x: { field: "t", type: "quantitative", title: "seconds (warmup before 0)" },
            y: { field: "rps", type: "quantitative", title: "requests/s" },
            detail: { field: "trial", type: "nominal" }, color: color,
            tooltip: [{ field: "trial" }, { field: "phase" }, { field: "t", title: "second" },
                      { field: "rps", title: "requests/s", format: ",d" }, { field: "errors" }]
          }
        }
        return layer unless legend

        layer.merge(params: [legend_selection("trialpick", "config")])
             .tap { |l| l[:encoding][:opacity] = highlight_opacity("trialpick") }
      end

      # The shaded warmup band, from the longest warmup to 0.
      def warmup_band_layer
        { transform: [{ filter: { field: "phase", equal: "warmup" } }],
          mark: { type: "rect", color: "#f0e6c8", opacity: 0.7 },
          encoding: { x: { field: "band_from", aggregate: "min", type: "quantitative" },
                      x2: { field: "band_to", aggregate: "max" } } }
      end
    end
  end
end
