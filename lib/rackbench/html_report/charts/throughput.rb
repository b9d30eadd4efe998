# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      module_function

      # Median throughput per configuration (diamond, coloured by verdict)
      # with its 95% confidence interval (whisker) and every batch (small
      # dots), one row per configuration in report order. Configurations
      # without a median keep their row, empty, so nothing silently
      # disappears from the list.
      def throughput(doc)
        rows = doc.configs.map do |c|
          ci = c["rps_ci95"].is_a?(Array) ? c["rps_ci95"] : [nil, nil]
          { "config" => doc.name(c), "rps" => c["rps_median"], "low" => ci[0], "high" => ci[1],
            "verdict" => doc.verdict(c), "batches" => c["batches"],
            "ci" => Units.interval(c["rps_ci95"], :rate) }
        end
        return nil if rows.none? { |r| r["rps"] }

        y = { field: "config", type: "nominal", sort: doc.names, scale: { domain: doc.names }, axis: config_axis }
        x = { type: "quantitative", scale: { zero: false }, axis: { tickCount: 6, labelOverlap: true },
              title: "#{doc.rate_unit} (median of batches, 95% CI)" }
        # A layer without data would give Vega an empty extent: layers are
        # left out rather than drawn empty (one batch each gives no CI).
        whiskers = rows.select { |r| r["low"] && r["high"] }
        batches = batch_rows(doc)
        medians = rows.select { |r| r["rps"] }
        layers = []
        unless whiskers.empty?
          layers << { data: { values: whiskers }, mark: { type: "rule", strokeWidth: 2 },
                      encoding: { y: y, x: x.merge(field: "low"), x2: { field: "high" }, color: verdict_color(doc) } }
        end
        unless batches.empty?
          layers << { data: { values: batches }, mark: { type: "circle", size: 28, color: "#555555", opacity: 0.55 },
                      encoding: { y: y, x: x.merge(field: "rps"),
                                  tooltip: [{ field: "config", title: "configuration" }, { field: "batch" },
                                            { field: "rps", title: doc.rate_unit, format: ",.1f" }] } }
        end
        layers << { data: { values: medians },
                    mark: { type: "point", shape: "diamond", filled: true, size: 150, opacity: 1 },
                    encoding: { y: y, x: x.merge(field: "rps"), color: verdict_color(doc),
                                tooltip: [{ field: "config", title: "configuration" },
                                          { field: "rps", title: "median #{doc.rate_unit}", format: ",.1f" },
                                          { field: "ci", title: "95% CI" }, { field: "batches", title: "ok batches" },
                                          { field: "verdict" }] } }
        { width: 640, height: { step: 26 }, layer: layers }
      end

      # One row per ok batch of each configuration, from its rps_per_batch
      # (and batch_numbers, when the report gives them).
      def batch_rows(doc)
        doc.configs.flat_map do |c|
          numbers = Array(c["batch_numbers"])
          Array(c["rps_per_batch"]).each_with_index.filter_map do |rps, i|
            next unless rps

            { "config" => doc.name(c), "rps" => rps, "batch" => numbers[i] || (i + 1) }
          end
        end
      end
    end
  end
end
