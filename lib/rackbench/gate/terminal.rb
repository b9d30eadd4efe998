# frozen_string_literal: true

module Rackbench
  class Gate
    # The gate document (Gate#to_h) for a terminal: one row per check,
    # the configurations that regressed or cannot be judged first, then
    # why for every check that is not plainly ok and what could not be
    # compared, the sides, and the status line the exit code stands for.
    # The table holds figures only; within a width (Text::Width) its
    # configurations wrap and its long lines too.
    class Terminal
      MARKS = { REGRESSED => "REGRESSED", CANNOT_SAY => "cannot say", OK => "ok" }.freeze
      HEADINGS = ["configuration", "figure", "baseline", "candidate", "ratio", "CI", "verdict", "status"].freeze

      # doc :: Gate#to_h
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(doc, width: nil)
        @doc = doc
        @width = width
      end

      def render
        text = [table, *why_lines, *problem_lines, *@doc["notes"].map { |line| "  #{line}" }, *side_lines, status_line,
                *@doc["reasons"].map { |line| "  #{line}" }].compact.join("\n") + "\n"
        Text::Wrap.prose(text, @width)
      end

      # "rackbench gate: regressed: 1 of 3 configurations regressed beyond
      # the thresholds (exit 3)", the exit code when the document has one.
      def status_line
        code = @doc["exit_code"] ? " (exit #{@doc["exit_code"]})" : ""
        "rackbench gate: #{@doc["status"]}: #{@doc["summary"]}#{code}"
      end

      private

      def table
        rows = @doc["pairs"].flat_map do |pair|
          pair["checks"].map do |check|
            figure = Report::BatchFigures.fetch(check["figure"])
            [pair["label"], check["words"], figure.format(check["baseline_median"]),
             figure.format(check["candidate_median"]), Units.ratio(check["ratio"]),
             Units.interval(check["ratio_ci"], :ratio, separator: "–"), check["verdict"], MARKS.fetch(check["status"])]
          end
        end
        return nil if rows.empty?

        confidence = Units.percent_trimmed(@doc["settings"]["family_confidence"])
        Text::Table.new(title: "Gate: #{@doc["rules"].map { |r| r["words"] }.join(", ")} (intervals at #{confidence})",
                        headings: HEADINGS, rows: rows, right: (2..5).to_a, width: @width).to_s
      end

      # The explanation of each ok check that does not rule out a
      # regression beyond its limit (the reasons under the status line say
      # why the others regressed or cannot say).
      def why_lines
        @doc["pairs"].flat_map do |pair|
          pair["checks"].select { |c| c["status"] == OK && c["ruled_out"] == false }
                        .map { |c| "  #{pair["label"]}, #{c["words"]}: #{c["explanation"]}" }
        end
      end

      def problem_lines
        @doc["pairs"].flat_map { |pair| pair["problems"].map { |text| "  #{pair["label"]}: #{text}" } }
      end

      def side_lines
        base = @doc["baseline"]
        cand = @doc["candidate"]
        lines = @doc["same_experiment"] ? ["Results: #{side(base)}"] : ["Baseline: #{side(base)}", "Candidate: #{side(cand)}"]
        lines + ["Machine: #{[base["machine"], cand["machine"]].uniq.join(" vs ")}"]
      end

      def side(side)
        labels = side["labels_text"].to_s
        "experiment #{side["name"]} (id #{side["experiment_id"]}, #{side["location"]})#{"; #{labels}" unless labels.empty?}"
      end
    end
  end
end
