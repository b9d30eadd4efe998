# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      module_function

      # Peak memory (PSS, the fair share of pages shared between worker
      # processes, or RSS where PSS is unknown) against median throughput,
      # one point per configuration coloured by verdict and labelled with
      # its name when there are few enough to read.
      def memory(doc)
        rows = doc.configs.filter_map do |c|
          bytes = c["pss_peak_bytes"] || c["rss_peak_bytes"]
          next unless bytes && c["rps_median"]

          { "config" => doc.name(c), "mb" => bytes / 1e6, "rps" => c["rps_median"], "verdict" => doc.verdict(c),
            "measure" => c["pss_peak_bytes"] ? "PSS" : "RSS", "rps_per_gb" => c["rps_per_gb"] }
        end
        return nil if rows.empty?

        point = {
          mark: { type: "point", filled: true, size: 90, opacity: 0.9 },
          encoding: {
            color: verdict_color(doc),
            tooltip: [{ field: "config", title: "configuration" },
                      { field: "rps", title: "median #{doc.rate_unit}", format: ",.1f" },
                      { field: "mb", title: "peak MB", format: ".1f" }, { field: "measure" },
                      { field: "rps_per_gb", title: "#{doc.rate_unit} per GB", format: ",.0f" }]
          }
        }
        layers = rows.size <= CROWDED_CONFIGS ? [point, *memory_labels(rows)] : [point]
        {
          width: 640, height: 320, data: { values: rows },
          encoding: {
            x: { field: "mb", type: "quantitative", scale: { zero: false, padding: 24 },
                 title: "peak memory (MB; PSS, or RSS where PSS is unknown)" },
            y: { field: "rps", type: "quantitative", scale: { zero: false, padding: 24 }, title: "median requests/s" }
          },
          layer: layers
        }
      end

      # Names beside the points: right of the points in the left half of
      # the chart, left of those in the right half, so none runs off the
      # plot. Sets each row's "side"; only sides that have points get a
      # layer (an empty layer would give Vega an empty extent).
      def memory_labels(rows)
        mbs = rows.map { |r| r["mb"] }
        middle = (mbs.min + mbs.max) / 2.0
        rows.each { |r| r["side"] = r["mb"] > middle ? "right" : "left" }
        rows.map { |r| r["side"] }.uniq.map do |side|
          { transform: [{ filter: { field: "side", equal: side } }],
            mark: { type: "text", align: side == "left" ? "left" : "right", dx: side == "left" ? 8 : -8,
                    fontSize: 11, color: "#333333" },
            encoding: { text: { field: "config" } } }
        end
      end
    end
  end
end
