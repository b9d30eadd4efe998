# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      module_function

      # Latency against percentile, one line per configuration. The x axis
      # counts "nines": x = -log10(1 - p/100), so 90% is 1, 99% is 2, 99.9%
      # is 3 and the tail, where configurations differ, gets as much room
      # as the median. The 100th percentile (the maximum) has no finite
      # place on that axis: it is drawn half a nine past the highest
      # finite percentile of any curve, labelled "max".
      def latency_curves(doc)
        curves = doc.configs.filter_map do |c|
          points = Array(c["latency_curve_us"]).select { |p, us| p.is_a?(Numeric) && us.is_a?(Numeric) && us.positive? }
          [doc.name(c), points] unless points.empty?
        end
        return nil if curves.empty?

        finite = curves.flat_map { |_, points| points.map(&:first) }.select { |p| p >= 0 && p < 100 }
        top_x = finite.map { |p| nines(p) }.max || 0.0
        max_x = top_x + 0.5
        rows = curves.flat_map do |name, points|
          points.map do |p, us|
            { "config" => name, "x" => p >= 100 ? max_x : nines([p, 0].max), "ms" => us / 1000.0,
              "percentile" => p >= 100 ? "max" : "p#{format("%g", p)}", "latency" => Units.latency_us(us) }
          end
        end
        ticks = (0..top_x.floor).to_a + [max_x]
        {
          width: 640, height: 320, data: { values: rows },
          params: [legend_selection("pick", "config")],
          mark: { type: "line", point: true, interpolate: "monotone" },
          encoding: {
            x: { field: "x", type: "quantitative", scale: { domain: [0, max_x], nice: false },
                 title: "percentile of requests",
                 axis: { values: ticks, labelExpr: nines_label_expr(ticks[0...-1]) } },
            y: { field: "ms", type: "quantitative", scale: { type: "log" }, title: "latency (ms, log scale)" },
            color: { field: "config", type: "nominal", sort: doc.names, legend: config_legend },
            opacity: highlight_opacity("pick"),
            tooltip: [{ field: "config", title: "configuration" }, { field: "percentile" }, { field: "latency" }]
          }
        }
      end

      # How many nines percentile +p+ has: -log10(1 - p/100), rounded so
      # that 99.9 gives 3.0, not 2.9999999999999996 (which would lose its
      # axis tick).
      def nines(percentile)
        -Math.log10(1 - percentile / 100.0).round(9)
      end

      # A Vega expression labelling the integer ticks 0%, 90%, 99%, 99.9%...
      # and anything past the last of them (the maximum) "max". Built from
      # numbers only: no document string ever enters an expression.
      def nines_label_expr(integer_ticks)
        integer_ticks.reverse.reduce("'max'") do |rest, n|
          label = n.zero? ? "0%" : "#{format("%.#{[n - 2, 0].max}f", 100 - 10.0**(2 - n))}%"
          "datum.value < #{n + 0.25} ? '#{label}' : #{rest}"
        end
      end
    end
  end
end
