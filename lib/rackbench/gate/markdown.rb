# frozen_string_literal: true

module Rackbench
  class Gate
    # The gate document (Gate#to_h) as Markdown to post on a pull request
    # or a job summary (GitHub's flavour: tables, <details>): the status,
    # then every check of each configuration that regressed or cannot be
    # judged, regressions first, then one folded row per configuration
    # within the thresholds, then the revisions compared and the machine.
    # What is seen unfolded grows with the problems only, so the summary of
    # 50 configurations that pass is a few lines.
    class Markdown
      MARKS = { REGRESSED => "❌", CANNOT_SAY => "❔", OK => "✅" }.freeze
      MINUS = "\u2212"
      NOT_RULED_OUT = "⚠"

      # doc :: Gate#to_h (String keys, as JSON reads it back)
      def initialize(doc)
        @doc = doc
      end

      def render
        [heading, blockers, problem_table, *where_the_time_went, passed, sides, footnote].compact.join("\n\n") + "\n"
      end

      # Text with what Markdown or HTML would read as markup escaped, for
      # values that come from users (labels, commit subjects, names).
      def self.escape(text)
        text.to_s.gsub(/[\\`*_{}\[\]<>|#]/) { |c| "\\#{c}" }.gsub(/\s+/, " ")
      end

      private

      def heading
        status = @doc["status"]
        rules = @doc["rules"].map { |r| r["words"] }.join(", ")
        "## rackbench gate: #{MARKS.fetch(status)} #{status}\n\n**#{esc(@doc["summary"])}** (thresholds: #{esc(rules)})."
      end

      def blockers
        lines = @doc["blockers"] + @doc["notes"]
        lines.empty? ? nil : lines.map { |line| "- #{esc(line)}" }.join("\n")
      end

      # Every check of the pairs that regressed or cannot be judged.
      def problem_table
        pairs = @doc["pairs"].reject { |p| p["status"] == OK }
        return nil if pairs.empty?

        rows = pairs.flat_map do |pair|
          problem = pair["problems"].map { |text| "| #{MARKS[CANNOT_SAY]} | #{esc(pair["label"])} | | | | | | #{esc(text)} |" }
          problem + pair["checks"].map { |check| check_row(pair, check) }
        end
        ["| | configuration | figure | baseline | candidate | change | ratio (#{confidence} CI) | verdict |",
         "|:-:|---|---|--:|--:|--:|:-:|---|", *rows].join("\n")
      end

      # Under each regression, the functions (or, without instructions,
      # the profile's frames) that moved the most: Gate::DIFF_ROWS rows.
      def where_the_time_went
        @doc["pairs"].filter_map do |pair|
          diffs = pair["diffs"]
          next unless diffs

          functions = diffs["functions"]
          profile = diffs["profile"]
          if functions
            diff_table(pair, Report::DiffText.functions_headline(functions), functions["rows"], :count, "function")
          elsif profile
            diff_table(pair, Report::DiffText.profile_headline(profile), profile["rows"], profile["unit"], "frame")
          end
        end
      end

      def diff_table(pair, headline, rows, unit, what)
        lines = rows.map do |row|
          cells = [Report::DiffText.name(row), Report::DiffText.amount(row["a"], unit), Report::DiffText.amount(row["b"], unit),
                   Report::DiffText.signed(row["difference"], unit), Report::DiffText.share(row["share"])]
          "| #{cells.map { |c| esc(c) }.join(" | ")} |"
        end
        ["**Where the time went** · #{esc(pair["label"])}: #{esc(headline)}", "",
         "| #{what} (* changed) | baseline | candidate | change | share |", "|---|--:|--:|--:|--:|", *lines].join("\n")
      end

      def check_row(pair, check)
        figure = Report::BatchFigures.fetch(check["figure"])
        mark = check["status"] == OK ? "" : MARKS[check["status"]]
        ratio = check["ratio"] ? "#{Units.ratio(check["ratio"])} (#{Units.interval(check["ratio_ci"], :ratio, separator: "–")})" : ""
        "| #{mark} | #{esc(pair["label"])} | #{esc(check["words"])} | #{figure.format(check["baseline_median"])} | " \
          "#{figure.format(check["candidate_median"])} | #{change(check["ratio"])} | #{ratio} | #{esc(check["explanation"])} |"
      end

      # The configurations within the thresholds, folded: one row each,
      # a column per figure with its change and interval.
      def passed
        pairs = @doc["pairs"].select { |p| p["status"] == OK }
        return nil if pairs.empty?

        figures = @doc["rules"].map { |r| r["figure"] }
        headings = figures.map { |name| esc(Report::BatchFigures.fetch(name).words) }
        open = false
        rows = pairs.map do |pair|
          cells = figures.map do |name|
            check = pair["checks"].find { |c| c["figure"] == name }
            next "" unless check

            open ||= check["ruled_out"] == false
            mark = check["ruled_out"] == false ? " #{NOT_RULED_OUT}" : ""
            "#{change(check["ratio"])} (#{Units.interval(check["ratio_ci"], :ratio, separator: "–")})#{mark}"
          end
          "| #{esc(pair["label"])} | #{cells.join(" | ")} |"
        end
        legend = open ? "\n#{NOT_RULED_OUT} the interval reaches beyond the threshold: a regression beyond it is not " \
                        "ruled out (more batches would).\n" : ""
        count = pairs.size
        <<~MD.chomp
          <details><summary>#{MARKS[OK]} #{count} configuration#{"s" unless count == 1} within the thresholds</summary>

          | configuration | #{headings.join(" | ")} |
          |---|#{"--:|" * figures.size}
          #{rows.join("\n")}
          #{legend}
          </details>
        MD
      end

      # The revisions compared, and the machine.
      def sides
        base = @doc["baseline"]
        cand = @doc["candidate"]
        lines = if @doc["same_experiment"]
                  ["**Results:** #{side(base)}"]
                else
                  ["**Baseline:** #{side(base)}", "**Candidate:** #{side(cand)}"]
                end
        machines = [base["machine"], cand["machine"]].uniq
        lines << "**Machine:** #{machines.map { |m| esc(m) }.join(" vs ")}"
        lines.join("  \n")
      end

      def side(side)
        labels = side["labels_text"].to_s
        "experiment #{esc(side["name"])} (id #{side["experiment_id"]})" \
          "#{" · #{esc(labels)}" unless labels.empty?}"
      end

      def footnote
        s = @doc["settings"]
        family = s["checks"] > 1 ? ", #{Units.percent_trimmed(s["confidence"])} over #{s["checks"]} checks (Bonferroni)" : ""
        "<sub>Change: the candidate's median over its batches against the baseline's. Each ratio's bootstrap interval is " \
          "at #{confidence}#{family}; a configuration regressed when its interval lies wholly on the worse side of 1, " \
          "beyond the ±#{Units.percent_trimmed(s["equivalence"])} equivalence band, and the change passes the " \
          "threshold. rackbench #{esc(@doc["rackbench_version"])}.</sub>"
      end

      def confidence
        Units.percent_trimmed(@doc["settings"]["family_confidence"])
      end

      # +ratio+ as a signed change: 0.9 => "−10.0%", 1.05 => "+5.0%".
      def change(ratio)
        return "" if ratio.nil?

        delta = (ratio - 1.0) * 100
        sign = delta.negative? ? MINUS : "+"
        "#{sign}#{format("%.1f", delta.abs)}%"
      end

      def esc(text)
        Markdown.escape(text)
      end
    end
  end
end
