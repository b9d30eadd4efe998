# frozen_string_literal: true

require_relative "diff_text"

module Rackbench
  class Report
    # "Where the time went" in the terminal: for each diff of the
    # document (Report::Diffs#to_h), its top functions by instructions
    # (FUNCTION_ROWS), its top frames of a profile, and its allocations and
    # GC, each a table of DiffText's cells under a headline.
    class DiffsTerminal
      FUNCTION_ROWS = 10
      FRAME_ROWS = 10

      # diffs :: the document's "diffs" entries
      # :labels :: configuration id -> label (default: {}, the ids)
      # :rows :: functions and frames shown per diff (default: 10)
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit); a function's or
      #           frame's name is shortened in the middle, its file too, figures never
      def initialize(diffs, labels: {}, rows: FUNCTION_ROWS, width: nil)
        @diffs = Array(diffs)
        @labels = labels
        @rows = rows
        @width = width
      end

      # The section as text, nil when there is no diff.
      def render
        return nil if @diffs.empty?

        parts = @diffs.map { |diff| one(diff) }
        ["Where the time went (B against A: A is the baseline; * its interval excludes 0):", *parts].join("\n")
      end

      # One diff's tables, under +title+ (default: "B against A", by label).
      def one(diff, title: nil)
        title ||= "#{label(diff["config_id"])} against #{label(diff["baseline_id"])}"
        [title, functions(diff["functions"]), frames(diff["profile"]), allocations(diff["allocations"])].compact.join("\n")
      end

      private

      def label(id)
        @labels.fetch(id, id)
      end

      def functions(doc)
        return nil unless doc

        rows = doc["rows"].first(@rows).map { |row| DiffText.function_cells(row) }
        table = Text::Table.new(title: "Instructions per request by function (callgrind, self cost)",
                                headings: DiffText::FUNCTION_HEADINGS, rows: rows, right: (2..7).to_a,
                                shrink: { 0 => :middle, 1 => :middle }, width: @width)
        ["  #{DiffText.functions_headline(doc)}", table.to_s, *unlisted(doc)].join("\n")
      end

      def unlisted(doc)
        a, b = doc["unlisted_max"]
        return [] unless a.to_f.positive? || b.to_f.positive?

        ["  A function missing on a side cost it at most #{DiffText.amount(a)} (A) / #{DiffText.amount(b)} (B) " \
         "instructions per request."]
      end

      def frames(doc)
        return nil unless doc

        unit = doc["unit"]
        rows = doc["rows"].first(FRAME_ROWS).map { |row| DiffText.frame_cells(row, unit) }
        table = Text::Table.new(title: DiffText.profile_title(doc),
                                headings: DiffText.frame_headings(doc), rows: rows, right: (2..7).to_a,
                                shrink: { 0 => :middle, 1 => :middle }, width: @width)
        ["  #{DiffText.profile_headline(doc)}", table.to_s].join("\n")
      end

      def allocations(rows)
        return nil unless rows

        Text::Table.new(title: "Allocations and GC (inside agent)", headings: DiffText::ALLOCATION_HEADINGS,
                        rows: rows.map { |row| DiffText.allocation_cells(row) }, right: (1..5).to_a, width: @width).to_s
      end
    end
  end
end
