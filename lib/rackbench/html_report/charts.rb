# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # Vega-Lite specifications of the report's charts: one method per
    # chart (in charts/), each a pure function of the Document returning a
    # Hash (data inlined as values), or nil when the document has nothing
    # to draw (then the page says so in place of the chart).
    #
    # No string from the document is ever put into a Vega expression:
    # user strings are only data values and titles, which Vega draws as
    # text. Expressions (axis labels) are built from numbers only.
    module Charts
      # One chart of the page: its anchor id, heading, a sentence on how to
      # read it, what the page says when there is no data, and its builder.
      Chart = Struct.new(:id, :title, :how_to_read, :empty_text, :builder, keyword_init: true)

      VERDICT_COLORS = {
        "baseline" => "#4c78a8", "faster" => "#2e9e44", "slower" => "#d1453b",
        "no difference detected" => "#8c8c8c", "too few batches" => "#d9a21b", "no baseline" => "#b07aa1",
        "no data" => "#c8c8c8"
      }.freeze
      # Above this many configurations, per-configuration labels and the
      # single-panel timeline get too crowded: labels become tooltips and
      # timelines get one small panel per configuration.
      CROWDED_CONFIGS = 8

      module_function

      # The page's markup of a chart: the container the page's render
      # script draws into (Scripts::RENDER finds it by data-chart) and its
      # spec as inline JSON. +id+ must be unique on the page.
      def embed(id, spec)
        %(<div class="chart" id="chart-#{id}" data-chart data-spec="spec-#{id}"></div>\n) +
          %(<script type="application/json" id="spec-#{id}">#{Escape.script_json(spec)}</script>)
      end

      # Every chart, in page order.
      def all
        [
          Chart.new(id: "throughput", title: "Throughput per configuration", builder: :throughput,
                    how_to_read: "Each diamond is a configuration's median requests per second over its batches, " \
                                 "the whisker its 95% confidence interval and the small grey dots the individual " \
                                 "batches; the colour is the verdict against the baseline.",
                    empty_text: "No configuration has a successful trial."),
          Chart.new(id: "matrix", title: "Rubies × processes and threads", builder: :dot_matrix,
                    how_to_read: "One column per Ruby and one row per processes × threads; the bigger and darker " \
                                 "the dot, the higher the median throughput written on it.",
                    empty_text: "No configuration has a successful trial."),
          Chart.new(id: "latency", title: "Latency percentiles", builder: :latency_curves,
                    how_to_read: "Latency (log scale) against the percentile of requests, stretched so that each " \
                                 "extra nine (90%, 99%, 99.9%) gets the same width; the last point of each line is " \
                                 "the slowest request. Click a legend entry to highlight one configuration.",
                    empty_text: "No latency distribution was recorded."),
          Chart.new(id: "timelines", title: "Per-trial timelines", builder: :timelines,
                    how_to_read: "Requests per second, second by second, for every successful trial (one line per " \
                                 "trial); the shaded band before 0 is the warmup, which is not counted.",
                    empty_text: "No per-second timeline was recorded."),
          Chart.new(id: "memory", title: "Memory against throughput", builder: :memory,
                    how_to_read: "Each point is a configuration: further right uses more memory at its peak, " \
                                 "higher serves more requests per second; up and to the left is better.",
                    empty_text: "No configuration has both a throughput and a memory measurement.")
        ]
      end

      # The chart of the Pages section (Page#pages), drawn only when a
      # configuration has a request list: not one of #all, so a report of
      # single URLs shows what it showed before.
      def pages
        Chart.new(id: "page-latency", title: "Latency per page", builder: :page_latency,
                  how_to_read: "One panel per configuration, one row per entry of the request list: the line " \
                               "runs from the page's median (p50, blue) to its 99th percentile (p99, red), on " \
                               "one log-scale axis for every panel, so a slow page stands out.",
                  empty_text: "No configuration has per-page results.")
      end

      # The colour encoding of the "verdict" field: a fixed colour per
      # verdict, so every chart and the tables agree, and only the verdicts
      # the document has in the legend.
      def verdict_color(doc)
        present = doc.configs.map { |c| doc.verdict(c) }
        colors = VERDICT_COLORS.select { |verdict, _| present.include?(verdict) }
        { field: "verdict", type: "nominal", title: "verdict",
          scale: { domain: colors.keys, range: colors.values } }
      end

      # A selection bound to the legend of +field+: clicking an entry
      # highlights its marks (the others fade).
      def legend_selection(name, field)
        { name: name, select: { type: "point", fields: [field] }, bind: "legend" }
      end

      def highlight_opacity(selection, on: 1.0, off: 0.12)
        { condition: { param: selection, value: on, empty: true }, value: off }
      end

      # A legend that lists every entry, however many configurations.
      def config_legend(title = "configuration")
        { title: title, symbolLimit: 0, labelLimit: 360, columns: 1 }
      end

      # An axis for configuration names, whose labels may be long.
      def config_axis
        { title: nil, labelLimit: 360 }
      end
    end
  end
end

require_relative "charts/throughput"
require_relative "charts/dot_matrix"
require_relative "charts/latency_curves"
require_relative "charts/timelines"
require_relative "charts/memory"
require_relative "charts/page_latency"
require_relative "charts/concurrency_sweep"
require_relative "charts/ws_round_trips"
require_relative "charts/inside_memory"
require_relative "charts/flame"
require_relative "charts/flame_diff"
