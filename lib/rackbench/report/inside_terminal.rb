# frozen_string_literal: true


module Rackbench
  class Report
    # The "Inside the server" section of the terminal report: for each
    # configuration with inside figures (configs.inside), a table with one
    # row per figure (its median over the batches, the interval of the
    # median, the CV, the batches, and against the baseline the ratio with
    # its interval and verdict), the headline against the baseline
    # ("−38% CPU per request, +120 MB PSS"), then which of CPU per request
    # and requests/s was the lower-noise measure in this run.
    class InsideTerminal
      HEADINGS = ["figure", "median", "95% CI", "CV", "batches", "vs baseline", "ratio 95% CI", "verdict"].freeze

      # configs :: [[label, inside]]: configs.inside of the report document
      #            (Hashes, nil for a configuration without figures)
      # :noise :: the report's inside_noise (a Hash or nil)
      # :labels :: configuration id -> label, to name the baseline (default: {})
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(configs, noise:, labels: {}, width: nil)
        @configs = configs.reject { |_, inside| inside.nil? }
        @noise = noise
        @labels = labels
        @width = width
      end

      # The section as text, or nil when no configuration has figures.
      def render
        return nil if @configs.empty?

        tables = @configs.map { |label, inside| table(label, inside) }
        lines = ["Inside the server (per configuration, over its ok batches):", *tables]
        lines << @noise["text"] if @noise
        lines.join("\n")
      end

      private

      def table(label, inside)
        rows = InsideSummary.rows(inside).map do |name, figure, row|
          [InsideSummary.label(name), InsideSummary.format(name, figure["median"]),
           interval(name, figure["ci95"]), Units.percent(figure["cv"], digits: 1), Array(figure["per_batch"]).size,
           InsideCompare.against(name, row), Units.interval(row&.fetch("ratio_ci95"), :ratio, separator: "–"),
           row ? row["verdict"] : Units::NONE]
        end
        title = "#{label}#{" (no counting agent: CPU from the sampler only)" unless inside["agent"]}"
        table = Text::Table.new(title: title, headings: HEADINGS, rows: rows, right: (1..6).to_a, width: @width)
        [table.to_s, *headline(inside), *missing(inside)].join("\n")
      end

      def interval(name, pair)
        return Units::NONE unless pair.is_a?(Array) && pair.size == 2

        "#{InsideSummary.format(name, pair[0])}–#{InsideSummary.format(name, pair[1])}"
      end

      def headline(inside)
        against = inside["against_baseline"]
        return [] unless against

        baseline = @labels.fetch(inside["baseline_id"], inside["baseline_id"])
        ["  against #{baseline}: #{against["headline"]}"]
      end

      def missing(inside)
        n = inside["missing_processes"].to_i
        n.positive? ? ["  #{n} process#{"es" unless n == 1} of the trees gave no counts: the sums leave them out"] : []
      end
    end
  end
end
