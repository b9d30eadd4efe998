# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The page's "Instructions per request" section (`measure:
    # instructions`): one row per configuration with instructions trials
    # (configs.instructions): the median over its batches, the interval of
    # the median, the CV, and against the baseline the ratio of medians
    # with its interval and verdict; beside them, when time was measured
    # too, the time verdict (requests/s), so that where instructions and
    # time agree and where they differ reads off one row. Then, per
    # configuration, how its count divides between its processes and the
    # functions that cost the most per request (callgrind's self costs at C
    # level: Ruby's VM functions as named in its symbols; a ruby built
    # without them, such as Debian's, shows addresses in libruby).
    class InstructionsSection
      ID = "instructions"
      TITLE = "Instructions per request"
      HEADINGS = ["configuration", "instr/request", "95% CI", "CV", "batches", "ratio", "ratio 95% CI", "verdict"].freeze
      NUMBERS = [false, true, true, true, true, true, true, false].freeze
      TIME_HEADINGS = ["req/s ratio", "time verdict"].freeze
      FUNCTION_HEADINGS = ["function", "object", "instr/request", "share"].freeze
      PROCESS_HEADINGS = ["role", "program", "processes", "instr/request", "share"].freeze

      # doc :: the Document
      def initialize(doc)
        @doc = doc
      end

      def configs
        @configs ||= @doc.configs.select { |c| c["instructions"] }
      end

      # Whether the page has the section, for the navigation.
      def any?
        !configs.empty?
      end

      # The section's HTML, "" when no configuration counted instructions.
      def render
        return "" unless any?

        <<~HTML
          <section id="#{ID}">
          <h2>#{TITLE}</h2>
          <p class="how">Every process of the server ran under valgrind's callgrind, instrumentation switched on and
          off at the edges of a window of a fixed number of requests (the load engine held each edge until every
          process had switched): the instructions of the window, summed over the processes, divided by its
          responses. Per configuration over its ok batches: the median, the 95% interval of the median, the CV, and
          against the baseline the ratio of medians with its interval and verdict (fewer instructions is faster).
          An instruction count does not see cache misses, branch mispredictions, waits or threads running in
          parallel (doc/methodology.md): read it beside time.</p>
          #{summary_table}
          #{method_note}
          #{gc_table}
          #{configs.each_with_index.map { |c, i| details(c, i) }.join("\n")}
          </section>
        HTML
      end

      private

      def time?
        configs.any? { |c| c["batches"].to_i.positive? }
      end

      def summary_table
        rows = configs.map do |c|
          doc = c["instructions"]
          per = doc["per_request"]
          against = doc["against_baseline"]
          verdict = against ? against["verdict"] : (c["verdict"] == "baseline" ? "baseline" : Units::NONE)
          cells = [@doc.name(c), Units.count_grouped(per["median"]), Units.interval(per["ci95"], :count_grouped),
                   Units.percent(per["cv"], digits: 2), batches(doc), Units.ratio(against&.fetch("ratio")),
                   Units.interval(against&.fetch("ratio_ci95"), :ratio), verdict]
          cells += [Units.ratio(c["ratio"]), c["batches"].to_i.positive? ? c["verdict"] : Units::NONE] if time?
          cells.map { |cell| esc(cell) }
        end
        headings = HEADINGS + (time? ? TIME_HEADINGS : [])
        Tables.table(headings, rows, numbers: NUMBERS + (time? ? [true, false] : []))
      end

      # Which figure the table shows and why, in one line (the same note for
      # every configuration, or one per configuration).
      def method_note
        notes = configs.map { |c| [@doc.name(c), c["instructions"]["method_note"]] }.reject { |_, n| n.nil? }
        return "" if notes.empty?
        return %(<p class="note">Figure: #{esc(notes.first.last)}.</p>) if notes.map(&:last).uniq.size == 1

        items = notes.map { |name, note| "<li>#{esc(name)}: #{esc(note)}</li>" }.join
        %(<p class="note">Figure, per configuration:</p><ul>#{items}</ul>)
      end

      GC_HEADINGS = ["configuration", "GC instr/request", "CV", "ratio", "verdict", "minor/1000 req", "major/1000 req",
                     "total instr/request", "total CV"].freeze

      # Ruby's GC inside the windows, apart from the figure: its
      # instructions per request, ratio and verdict, cycles, and the totals.
      def gc_table
        rows = configs.filter_map do |c|
          doc = c["instructions"]
          gc = doc["gc"]
          next unless gc && gc["cycles_per_1000"]

          per = gc["per_request"] || {}
          against = gc["against_baseline"] || {}
          total = doc["total_per_request"] || {}
          [@doc.name(c), Units.count_grouped(per["median"]), Units.percent(per["cv"], digits: 1),
           Units.ratio(against["ratio"]), against["verdict"] || Units::NONE,
           format("%.2f", gc["cycles_per_1000"]["minor"]), format("%.2f", gc["cycles_per_1000"]["major"]),
           Units.count_grouped(total["median"]), Units.percent(total["cv"], digits: 2)].map { |cell| esc(cell) }
        end
        return "" if rows.empty?

        causes = configs.flat_map { |c| Array(c.dig("instructions", "gc", "major_by")) }.uniq.sort
        cause = causes.empty? ? "" : " Major cycles were set off by: #{esc(causes.join(", "))}."
        %(<h3 id="#{ID}-gc">Ruby's GC inside the windows</h3>\n<p class="how">Apart from the figure: the instructions ) +
          %(of calls into Ruby's collector (callgrind's call graph), its cycles per 1,000 requests (GC.stat in every ) +
          %(process), and every instruction with the GC in.#{cause}</p>\n) +
          Tables.table(GC_HEADINGS, rows, numbers: [false, true, true, true, false, true, true, true, true])
      end

      def batches(doc)
        doc["failed"].to_i.positive? ? "#{doc["batches"]} + #{doc["failed"]} failed" : doc["batches"].to_s
      end

      def details(config, index)
        doc = config["instructions"]
        parts = [%(<h3 id="#{ID}-#{index}">#{esc(@doc.name(config))}</h3>)]
        parts << processes(doc) if Array(doc["processes"]).any?
        parts << functions(doc) if Array(doc["functions"]).any?
        parts.join("\n")
      end

      def processes(doc)
        total = doc["processes"].sum { |p| p["per_request"].to_f }
        rows = doc["processes"].map do |p|
          [p["role"], p["program"], Units.integer(p["count"]&.round), Units.count_grouped(p["per_request"]),
           total.positive? ? Units.percent(p["per_request"].to_f / total, digits: 1) : Units::NONE].map { |c| esc(c) }
        end
        left_out = doc["left_out"]
        note = if left_out
                 "<p class=\"note\">Left out of the count: #{esc(left_out["programs"].join(", "))}, " \
                   "#{esc(Units.count_grouped(left_out["per_request"]))} instructions per request: programs the " \
                   "server started during the window on the clock (Passenger's core runs ps every few seconds).</p>\n"
               else
                 ""
               end
        "<p class=\"how\">By process (median over the batches): the main process, forked workers, programs " \
          "another process exec'd.</p>\n#{note}#{Tables.table(PROCESS_HEADINGS, rows, numbers: [false, false, true, true, true])}"
      end

      def functions(doc)
        rows = doc["functions"].map do |f|
          [f["name"], f["object"], Units.count_grouped(f["per_request"]), Units.percent(f["share"], digits: 2)]
            .map { |c| esc(c) }
        end
        symbols = doc["functions"].count { |f| f["name"].to_s.start_with?("0x") }
        note = if symbols.positive?
                 "<p class=\"note\">#{symbols} of them are addresses: their object has no symbols for them " \
                   "(Debian strips libruby's static functions; a ruby built from source names them).</p>\n"
               else
                 ""
               end
        "<p class=\"how\">The functions with the most instructions per request (their own code, callees left " \
          "out), over every batch and process.</p>\n#{note}#{Tables.table(FUNCTION_HEADINGS, rows, numbers: [false, false, true, true])}"
      end

      def esc(value)
        Escape.html(value)
      end
    end
  end
end
