# frozen_string_literal: true

module Rackbench
  module Bisect
    # The bisect document (Result#to_h) as Markdown for an issue or a pull
    # request (GitHub's flavour): the status, each step's first bad commit
    # with its effect, its confirmation and `git diff --stat` (folded),
    # then every commit measured, what was skipped, and the settings.
    class Markdown
      MARKS = { Search::FOUND => "✅", Search::NO_STEP => "➖", Search::CANNOT_SAY => "❔",
                Search::SPREAD => "❔", Search::UNMEASURABLE => "❌" }.freeze

      # doc :: Result#to_h (String keys, as JSON reads it back)
      def initialize(doc)
        @doc = doc
      end

      def render
        [heading, *steps, commits, notes, footnote].compact.join("\n\n") + "\n"
      end

      private

      def heading
        subject = @doc["subject"]
        "## rackbench bisect: #{MARKS.fetch(@doc["status"], "❔")} #{esc(@doc["status"])}\n\n" \
          "**#{esc(@doc["summary"])}** (#{esc(subject["kind"])} '#{esc(subject["name"])}', " \
          "#{esc(@doc["settings"]["figure_words"])}, #{@doc["commits"]} commits from " \
          "`#{@doc["good"]["short"]}` to `#{@doc["bad"]["short"]}`#{ends_text})."
      end

      def ends_text
        ends = @doc["ends"]
        ends ? ": #{esc(ends["text"])}" : ""
      end

      def steps
        @doc["steps"].each_with_index.map do |step, i|
          bad = step["first_bad"]
          title = @doc["steps"].size == 1 ? "First bad commit" : "Step #{i + 1}"
          others = step["exact"] ? "" : " (or one of #{step["candidates"][0...-1].map { |c| "`#{c["short"]}`" }.join(", ")}, " \
                                        "which could not be measured)"
          confirmation = step["confirmation"]
          <<~MD.chomp
            ### #{title}: `#{bad["short"]}` #{esc(bad["subject"])}#{others}

            #{esc(bad["author"])}, #{esc(bad["author_date"])}, `#{bad["commit"]}`.
            #{esc(@doc["settings"]["figure_words"].capitalize)}: #{esc(step["effect"]["text"])} than `#{step["last_good"]["short"]}`#{share(step)}; #{confirmation_text(confirmation)}.

            <details><summary>git diff --stat: #{esc(bad["diff_stat"]["summary"])}</summary>

            ```
            #{bad["diff_stat"]["files"].join("\n")}
            ```
            </details>
          MD
        end
      end

      def share(step)
        step["share"] && @doc["steps"].size > 1 ? " (#{Units.percent_trimmed(step["share"], digits: 0)} of the change)" : ""
      end

      def confirmation_text(confirmation)
        Terminal.confirmation_text(confirmation, mark: ->(word) { "**#{word}**" }, escape: ->(text) { esc(text) })
      end

      def commits
        figure = Report::BatchFigures.fetch(@doc["settings"]["figure"])
        rows = @doc["measured"].map do |row|
          value = row["median"] ? Bisect.figure_text(figure, row["median"]) : ""
          against = row.dig("against_good", "text") || ""
          state = row["reason"] ? "#{row["status"]}: #{row["reason"]}" : row["side"].to_s
          gems = row["gems_differ"].to_a.empty? ? "" : " (gems differ: #{Report::GemDifferences.text(row["gems_differ"])})"
          "| #{row["index"]} | `#{row["short"]}` | #{esc(row["subject"])} | #{value} | #{row["batches"]} | " \
            "#{esc(against)} | #{esc(state + gems)} |"
        end
        <<~MD.chomp
          <details><summary>#{@doc["measured"].size} commits measured</summary>

          | # | commit | subject | #{esc(figure.words)} | batches | against good | |
          |--:|---|---|--:|--:|---|---|
          #{rows.join("\n")}
          </details>
        MD
      end

      def notes
        lines = @doc["spreads"].map { |s| "- spread: `#{s["from"]["short"]}` to `#{s["to"]["short"]}`: #{esc(s["change"])}" }
        lines += @doc["unsure"].map { |s| "- unsure: `#{s["from"]["short"]}` to `#{s["to"]["short"]}`: #{esc(s["change"])}" }
        lines.empty? ? nil : lines.join("\n")
      end

      def footnote
        s = @doc["settings"]
        "<sub>Each commit measured is a run of its own (#{s["min_batches"]} to #{s["max_batches"]} batches); " \
          "two commits are compared as `rackbench gate --strict` compares runs, at #{Units.percent_trimmed(s["confidence"])} " \
          "confidence: a side holds a step when its later commit is at least #{Units.percent_trimmed(s["min_step"])} worse; " \
          "good and bad must differ by #{Units.percent_trimmed(s["threshold"])}. rackbench #{esc(@doc["rackbench_version"])}.</sub>"
      end

      def esc(text)
        Gate::Markdown.escape(text)
      end
    end
  end
end
