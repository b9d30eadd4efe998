# frozen_string_literal: true

module Rackbench
  module Bisect
    # The bisect document (Result#to_h) for a terminal: every commit
    # measured in the history's order with its figure and its change from
    # the good commit, then each step found (its first bad commit, the
    # effect with its interval, the confirmation, `git diff --stat`),
    # what was skipped or spread, and the status line. Within a width
    # (Text::Width) the table's subjects wrap (a commit set aside says its
    # status there, and why in a line below), and so do the long lines;
    # without one every cell is whole.
    class Terminal
      HEADINGS = ["#", "commit", "subject", "figure", "batches", "against good (+: worse)", "side"].freeze
      SUBJECT_CHARS = 40
      GEMS_MARK = "*"

      # doc :: Result#to_h (String keys)
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(doc, width: nil)
        @doc = doc
        @width = width
      end

      def render
        text = [table, *gems_lines, *step_lines, *spread_lines, *set_aside_lines, *ends_lines, status_line].compact.join("\n") + "\n"
        Text::Wrap.prose(text, @width)
      end

      # "rackbench bisect: found: the first bad commit is 1a2b3c4d5e"
      def status_line
        "rackbench bisect: #{@doc["status"]}: #{@doc["summary"]}"
      end

      private

      def figure
        Report::BatchFigures.fetch(@doc["settings"]["figure"])
      end

      def table
        rows = @doc["measured"].map do |row|
          value = row["median"] ? Bisect.figure_text(figure, row["median"]) : row["status"]
          # A reason is said whole below the table (set_aside_lines): its row says only the status.
          [row["index"], row["short"], row["subject"], value, row["batches"], against(row),
           row["reason"] ? row["status"] : side(row)]
        end
        Text::Table.new(title: "Bisect #{@doc["experiment"]["name"]}: #{figure.words} of " \
                               "#{@doc["subject"]["kind"]} '#{@doc["subject"]["name"]}' along its commits",
                        headings: HEADINGS, rows: rows, right: [0, 3, 4], shrink: { 1 => :fixed, 5 => :fixed, 6 => :fixed }, keys: 2,
                        width: @width).to_s
      end

      # The row's change from the good commit with its interval, signed
      # (the gate's reason when it has none).
      def against(row)
        return "good" if row["index"].zero?

        judgement = row["against_good"]
        return "" unless judgement

        Judge.signed_text(judgement["worsening"], judgement["worsening_ci"]) || judgement["text"]
      end

      # The row's side, marked when its servers loaded other gems than
      # the good commit's (which ones: gems_lines, below the table).
      def side(row)
        Array(row["gems_differ"]).empty? ? row["side"] : "#{row["side"]} #{GEMS_MARK}"
      end

      def gems_lines
        @doc["measured"].reject { |row| Array(row["gems_differ"]).empty? }.map do |row|
          "#{GEMS_MARK} gems differ: ##{row["index"]} #{row["short"]} against the good commit: " \
            "#{Report::GemDifferences.text(row["gems_differ"])}"
        end
      end

      def step_lines
        @doc["steps"].each_with_index.flat_map do |step, i|
          bad = step["first_bad"]
          head = @doc["steps"].size == 1 ? "First bad commit" : "Step #{i + 1}: first bad commit"
          lines = ["#{head}: #{bad["commit"]}", "  #{bad["subject"]} (#{bad["author"]}, #{bad["author_date"]})"]
          unless step["exact"]
            lines << "  or one of the commits before it that could not be measured: " \
                     "#{step["candidates"][0...-1].map { |c| c["short"] }.join(", ")}"
          end
          lines << "  #{step["effect"]["text"]} than #{step["last_good"]["short"]}#{share(step)}"
          lines << "  #{confirmation(step["confirmation"])}"
          lines + ["  #{bad["diff_stat"]["summary"]}", *bad["diff_stat"]["files"].first(10).map { |f| "    #{f}" }]
        end
      end

      def share(step)
        step["share"] && @doc["steps"].size > 1 ? ", #{Units.percent_trimmed(step["share"], digits: 0)} of the change" : ""
      end

      def confirmation(confirmation)
        Terminal.confirmation_text(confirmation)
      end

      def spread_lines
        spreads = @doc["spreads"].map do |s|
          "Spread: #{s["from"]["short"]} to #{s["to"]["short"]} is #{s["change"]}, in steps smaller than " \
            "#{Units.percent_trimmed(@doc["settings"]["min_step"])}"
        end
        unsure = @doc["unsure"].map do |s|
          "Unsure: #{s["from"]["short"]} to #{s["to"]["short"]}: #{s["change"]}; a step there is neither found nor ruled out"
        end
        spreads + unsure
      end

      def set_aside_lines
        @doc["measured"].select { |row| %w[skipped cannot\ say].include?(row["status"]) }.map do |row|
          "#{row["status"] == "skipped" ? "Skipped" : "Cannot say"}: #{row["short"]} #{Terminal.truncate(row["subject"])}: " \
            "#{row["reason"]}"
        end
      end

      def ends_lines
        ends = @doc["ends"]
        return [] unless ends

        ["Good #{@doc["good"]["short"]} to bad #{@doc["bad"]["short"]} (#{@doc["commits"]} commits): #{ends["text"]}"]
      end

      # A step's confirmation (the document's steps.confirmation) in
      # words; +mark+ wraps its status (Markdown makes it bold), +escape+
      # the figures' text.
      def self.confirmation_text(confirmation, mark: ->(word) { word }, escape: ->(text) { text })
        return "#{mark.call("not confirmed")}: no confirmation run" unless confirmation

        text = escape.call(confirmation.dig("judgement", "text") || confirmation["reason"])
        case confirmation["status"]
        when Result::CONFIRMED then "#{mark.call("confirmed")} in an interleaved run of both commits: #{text}"
        when Result::NOT_CONFIRMED then "#{mark.call("NOT confirmed")}: an interleaved run of both commits found #{text}"
        else "#{mark.call("cannot say")} in an interleaved run of both commits: #{text}"
        end
      end

      # +text+ cut to +chars+ characters, with an ellipsis.
      def self.truncate(text, chars = SUBJECT_CHARS)
        text = text.to_s.gsub(/\s+/, " ")
        text.length > chars ? "#{text[0, chars - 1]}…" : text
      end
    end
  end
end
