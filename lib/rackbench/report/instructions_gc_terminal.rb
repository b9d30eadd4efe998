# frozen_string_literal: true

module Rackbench
  class Report
    # The GC inside the instructions windows, apart from the figure
    # (configs.instructions.gc): per configuration its instructions per
    # request (median, CV, and against the baseline the ratio and
    # verdict), its cycles per 1,000 requests, what set off its major
    # cycles, and the totals with the GC in. Nothing when no configuration
    # has a GC figure.
    class InstructionsGcTerminal
      HEADINGS = ["GC instr/request", "CV", "ratio", "verdict", "minor/1000 req", "major/1000 req", "total instr/request",
                  "total CV"].freeze

      # entries :: the configuration entries with instructions
      # :dimensions :: the dimensions the labels show
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(entries, dimensions:, width: nil)
        @entries = entries.select { |e| e.dig("instructions", "gc") }
        @dimensions = dimensions
        @width = width
      end

      def render
        return nil if @entries.empty? || @entries.none? { |e| e.dig("instructions", "gc", "cycles_per_1000") }

        headings = @dimensions + HEADINGS
        right = (@dimensions.size...headings.size).reject { |i| headings[i] == "verdict" }
        table = Text::Table.new(title: "Ruby's GC inside the windows (apart from the figure above)",
                                headings: headings, rows: @entries.map { |e| row(e) }, right: right,
                                keys: @dimensions.size, width: @width)
        [table.to_s, *major_lines].join("\n")
      end

      private

      def row(entry)
        doc = entry["instructions"]
        gc = doc["gc"]
        per = gc["per_request"] || {}
        against = gc["against_baseline"] || {}
        cycles = gc["cycles_per_1000"] || {}
        total = doc["total_per_request"] || {}
        @dimensions.map { |d| Report.format_dim(entry["dims"][d]) } +
          [Units.count_grouped(per["median"]), Units.percent(per["cv"], digits: 1), Units.ratio(against["ratio"]),
           against["verdict"] || Units::NONE, decimal(cycles["minor"]), decimal(cycles["major"]),
           Units.count_grouped(total["median"]), Units.percent(total["cv"], digits: 2)]
      end

      def decimal(value)
        value.nil? ? Units::NONE : format("%.2f", value)
      end

      # What set off the major cycles, where some ran.
      def major_lines
        causes = @entries.flat_map { |e| Array(e.dig("instructions", "gc", "major_by")) }.uniq.sort
        causes.empty? ? [] : ["Major GC cycles inside the windows were set off by: #{causes.join(", ")}."]
      end
    end
  end
end
