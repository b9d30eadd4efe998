# frozen_string_literal: true

require "digest"

module Rackbench
  class HtmlReport
    # The page's "Where the time went" section: for each diff of the
    # document (Report::Diffs, each configuration against its baseline),
    # its top functions by instructions per request (FUNCTION_ROWS), the
    # differential flame graph of the two call graphs, the top frames of
    # the two profiles with their own differential flame graph, and
    # allocations and GC. Cells from Report::DiffText, as every view.
    class DiffsSection
      ID = "diffs"
      TITLE = "Where the time went"
      FUNCTION_ROWS = 30
      FRAME_ROWS = 30

      def initialize(doc)
        @doc = doc
      end

      def diffs
        Array(@doc.raw["diffs"])
      end

      def any?
        !diffs.empty?
      end

      def render
        return "" unless any?

        <<~HTML
          <section id="#{ID}">
          <h2>#{TITLE}</h2>
          <p class="how">Each configuration against its baseline (A), item by item: each side's mean per request
          over its batches, the difference B − A with its interval across the batches (every item's at the family's
          confidence, so that noise in hundreds of functions is not read as a change: a row marked * excludes 0),
          and its share of the whole difference. Functions are callgrind's self costs (their own code); a function
          marked "A only" or "B only" was below the other side's list (doc/methodology.md, "What a function diff can
          and cannot tell").</p>
          #{diffs.each_with_index.map { |diff, i| one(diff, i) }.join("\n")}
          </section>
        HTML
      end

      private

      def one(diff, index)
        stem = "diff-#{index + 1}"
        title = "#{name(diff["config_id"])} against #{name(diff["baseline_id"])}"
        parts = [%(<h3 id="#{stem}">#{esc(title)}</h3>)]
        parts << functions(diff["functions"]) if diff["functions"]
        parts << flame("#{stem}-calls", diff["call_tree"], "instructions", call_tree_how) if diff["call_tree"]
        parts << frames(diff["profile"], stem) if diff["profile"]
        parts << allocations(diff["allocations"]) if diff["allocations"]
        parts.join("\n")
      end

      def name(id)
        @doc.name_for_id(id)
      end

      def functions(doc)
        rows = doc["rows"].first(FUNCTION_ROWS).map { |row| Report::DiffText.function_cells(row).map { |c| esc(c) } }
        <<~HTML.chomp
          <p class="how">#{esc(Report::DiffText.functions_headline(doc))}. Per call: what one call costs more or less
          (its self cost over its calls).</p>
          #{Tables.table(Report::DiffText::FUNCTION_HEADINGS, rows, numbers: [false, false] + [true] * 6)}
        HTML
      end

      def call_tree_how
        "Callgrind's call graphs of both sides, laid out as B's: each function as wide as B's instructions per " \
          "request under it, red where B executes more than A, blue where less. A call graph knows each caller's " \
          "calls, not whole stacks: a function's callees are shared among its callers in proportion to their calls' " \
          "cost."
      end

      def frames(doc, stem)
        unit = doc["unit"]
        rows = doc["rows"].first(FRAME_ROWS).map { |row| Report::DiffText.frame_cells(row, unit).map { |c| esc(c) } }
        how = "#{doc["tool"]} #{doc["mode"]} profiles of both sides (profiled trials, which count in no figure), " \
              "merged per side, as B's flame graph coloured by what changed."
        <<~HTML.chomp
          <p class="how">#{esc(Report::DiffText.profile_headline(doc))}.</p>
          #{Tables.table(Report::DiffText.frame_headings(doc), rows, numbers: [false, false] + [true] * 6)}
          #{flame("#{stem}-profile", doc["flame"], unit, how)}
        HTML
      end

      def flame(id, nodes, unit, how)
        spec = Charts::FlameDiff.spec(nodes, unit: unit)
        chart = spec ? Charts.embed(id, spec) : %(<p class="empty">Nothing to draw.</p>)
        %(<p class="how">#{esc(how)}</p>\n#{chart})
      end

      def allocations(rows)
        cells = rows.map { |row| Report::DiffText.allocation_cells(row).map { |c| esc(c) } }
        <<~HTML.chomp
          <p class="how">Allocations and GC, as the inside agent counted them in the time trials.</p>
          #{Tables.table(Report::DiffText::ALLOCATION_HEADINGS, cells, numbers: [false] + [true] * 5 + [false])}
        HTML
      end

      def esc(value)
        Escape.html(value)
      end
    end
  end
end
