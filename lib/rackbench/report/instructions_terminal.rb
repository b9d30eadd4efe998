# frozen_string_literal: true

require_relative "instructions_gc_terminal"

module Rackbench
  class Report
    # The "Instructions per request" section of the terminal report: one
    # row per configuration with instructions trials (configs.instructions):
    # the median over its batches, the interval of the median, the CV, the
    # batches, and against the baseline the ratio with its interval and the
    # verdict; when time was measured too, the time verdict beside it
    # (requests/s), so that where the two agree and where they differ reads
    # off one row. Then how each configuration's count divides between its
    # processes, when it ran more than one. Under the table, in one line,
    # which figure it is and why (outside GC, or including it); then the GC
    # inside the windows, apart (InstructionsGcTerminal).
    class InstructionsTerminal
      HEADINGS = ["instr/request", "95% CI", "CV", "batches", "ratio", "ratio 95% CI", "verdict"].freeze
      TIME_HEADINGS = ["req/s ratio", "time verdict"].freeze

      # entries :: the report's configuration entries (configs of the
      #            document, Hashes), in order
      # :dimensions :: the dimensions the labels show
      # :labels :: configuration id -> label, to name the baseline (default: {})
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(entries, dimensions:, labels: {}, width: nil)
        @entries = entries.select { |e| e["instructions"] }
        @dimensions = dimensions
        @labels = labels
        @width = width
      end

      # The section as text, or nil when no configuration counted instructions.
      def render
        return nil if @entries.empty?

        time = @entries.any? { |e| e["batches"].to_i.positive? }
        headings = @dimensions + HEADINGS + (time ? TIME_HEADINGS : [])
        rows = @entries.map { |e| row(e, time) }
        right = (@dimensions.size...headings.size).reject { |i| headings[i].include?("verdict") }
        table = Text::Table.new(title: "Instructions per request (callgrind, over the ok batches)",
                                headings: headings, rows: rows, right: right, keys: @dimensions.size, width: @width)
        gc = InstructionsGcTerminal.new(@entries, dimensions: @dimensions, width: @width).render
        [table.to_s, *method_lines, *baseline_line, gc, *process_lines].compact.join("\n")
      end

      private

      def row(entry, time)
        doc = entry["instructions"]
        per = doc["per_request"]
        against = doc["against_baseline"]
        cells = @dimensions.map { |d| Report.format_dim(entry["dims"][d]) }
        cells += [Units.count_grouped(per["median"]), Units.interval(per["ci95"], :count_grouped, separator: "–"),
                  Units.percent(per["cv"], digits: 2), batches(doc), Units.ratio(against&.fetch("ratio")),
                  Units.interval(against&.fetch("ratio_ci95"), :ratio, separator: "–"), verdict(entry, against)]
        cells += [Units.ratio(entry["ratio"]), entry["batches"].to_i.positive? ? entry["verdict"] : Units::NONE] if time
        cells
      end

      def batches(doc)
        doc["failed"].to_i.positive? ? "#{doc["batches"]} (+#{doc["failed"]} failed)" : doc["batches"].to_s
      end

      def verdict(entry, against)
        return against["verdict"] if against
        return "baseline" if entry["instructions"]["baseline_id"].nil? && entry["verdict"] == "baseline"

        Units::NONE
      end

      # "Figure: outside GC: ..." once when every configuration has the same
      # note, else one line per configuration.
      def method_lines
        notes = @entries.map { |e| [e["id"], e["instructions"]["method_note"]] }.reject { |_, n| n.nil? }
        return [] if notes.empty?
        return ["Figure: #{notes.first.last}."] if notes.map(&:last).uniq.size == 1

        ["Figure, per configuration:", *notes.map { |id, note| "  #{@labels.fetch(id, id)}: #{note}." }]
      end

      def baseline_line
        bases = @entries.map { |e| e["baseline_id"] }.compact.uniq
        return [] if bases.empty?

        what = bases.size == 1 ? @labels.fetch(bases.first, bases.first) : "each configuration's baseline"
        ["Ratios compare median instructions per request with #{what}; fewer instructions is faster."]
      end

      # "  LABEL: main ruby3.1 puma 12% (23,123), worker ruby3.1 puma ×2 88% (170,000)" for a
      # configuration whose count comes from more than one process.
      def process_lines
        lines = @entries.filter_map do |e|
          processes = e["instructions"]["processes"]
          left_out = e["instructions"]["left_out"]
          next if processes.size < 2 && processes.all? { |p| p["count"].to_i <= 1 } && left_out.nil?

          total = processes.sum { |p| p["per_request"].to_f }
          parts = processes.map do |p|
            count = p["count"].to_i > 1 ? " ×#{p["count"].to_i}" : ""
            share = total.positive? ? Units.percent(p["per_request"].to_f / total, digits: 0) : Units::NONE
            "#{p["role"]} #{p["program"]}#{count} #{share} (#{Units.count_grouped(p["per_request"])})"
          end
          helpers = left_out ? "; left out: #{left_out["programs"].join(", ")} #{Units.count_grouped(left_out["per_request"])} " \
                               "(helpers the server ran on the clock)" : ""
          "  #{@labels.fetch(e["id"], e["id"])}: #{parts.join(", ")}#{helpers}"
        end
        lines.empty? ? [] : ["Instructions per request by process (median over the batches):", *lines]
      end
    end
  end
end
