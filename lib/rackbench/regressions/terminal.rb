# frozen_string_literal: true

require_relative "../bisect"

module Rackbench
  class Regressions
    # The regressions for a terminal: a table of them, one line each in
    # summaries, and one in full (`rackbench regressions show ID`).
    module Terminal
      module_function

      # "#3 confirmed: requests/s −5.1% in ruby=3.4 server=puma (nightly), ruby master 1a2b3c4d5e..9f8e7d6c5b"
      def line(regression)
        "##{regression.id} #{Regressions.words(regression.state)}: #{regression.figure_words} " \
          "#{Publish::Html.signed(regression.change)} in #{regression.config_label} (#{regression.experiment}), " \
          "#{Publish.range_text(regression.document["range"])}"
      end

      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def table(regressions, width: nil)
        return "No regression.\n" if regressions.empty?

        rows = regressions.map do |r|
          [r.id, Regressions.words(r.state), r.experiment, r.config_label, r.figure_words, Publish::Html.signed(r.change),
           interval(r), Publish.range_text(r.document["range"]), found(r)]
        end
        table = Text::Table.new(headings: ["id", "state", "experiment", "configuration", "figure", "change",
                                           "95% interval", "commit range", "found in the run of"], rows: rows,
                                right: [0, 5], shrink: { 7 => :middle }, width: width)
        "#{table}\n"
      end

      def show(regression)
        range = regression.document["range"] || {}
        lines = [line(regression),
                 "  configuration: #{regression.config_id}",
                 "  change: #{Publish::Html.signed(regression.change)} (95% interval #{interval(regression)}), level " \
                 "#{format_value(regression, regression.level_before)} -> #{format_value(regression, regression.level_after)}; " \
                 "threshold #{Publish::Html.pct(regression.threshold)} (#{regression.rule} rule)",
                 "  last good run: #{run_text(range["good"])}",
                 "  the step may be at: #{range["runs"].to_i > 1 ? "#{range["runs"]} runs, #{run_text(range["first"])} to " : ""}" \
                 "#{run_text(range["bad"])}",
                 *Array(range["revisions"]).map { |r| "  bisect #{r["of"]} #{r["name"]}: --good #{r["good"] || "?"} --bad #{r["bad"]}" },
                 "  state: #{Regressions.words(regression.state)}, by #{regression.state_by} at " \
                 "#{Regressions.time(regression.state_at)}#{": #{regression.state_note}" if regression.state_note}"]
        bisect = regression.document["bisect"]
        if bisect
          summary = Bisect::Summary.lines(bisect)
          lines.concat(summary ? ["  bisect: #{summary.first}", *summary.drop(1).map { |l| "    #{l}" }] : ["  bisect result attached"])
        end
        lines << "  events:"
        regression.events.each do |e|
          lines << "    #{Regressions.time(e["at"])} #{e["event"]} -> #{Regressions.words(e["state"])} by #{e["by"]}" \
                   "#{": #{e["note"]}" if e["note"]}"
        end
        "#{lines.join("\n")}\n"
      end

      def interval(regression)
        return Units::NONE unless regression.change_low

        "#{Publish::Html.signed(regression.change_low)} to #{Publish::Html.signed(regression.change_high)}"
      end

      def found(regression)
        at = regression.document.dig("range", "found", "created_at") || Regressions.time(regression.detected_at)
        at.to_s.sub("T", " ").sub(/:\d\dZ\z/, "")
      end

      def run_text(run)
        return "none (the first run)" unless run

        labels = run["labels_text"].to_s.empty? ? "" : ", #{run["labels_text"]}"
        "experiment id #{run["experiment_id"]} (#{run["created_at"]}#{labels})"
      end

      def format_value(regression, value) = Report::BatchFigures.fetch(regression.figure).format(value)
    end
  end
end
