# frozen_string_literal: true

module Rackbench
  class Series
    # The history document (Series#to_h) for a terminal: the runs once
    # (number, date, experiment id, labels), then a table per
    # configuration with each run's median and interval, the change points
    # marked and, under the table, named by revision; then the runs of
    # other machines, apart.
    class Terminal
      MARK = "◀ change"

      # doc :: Series#to_h
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(doc, width: nil)
        @doc = doc
        @width = width
      end

      def render
        Text::Wrap.prose([heading, runs, *@doc["configs"].map { |c| config(c) }, apart].compact.join("\n\n") + "\n", @width)
      end

      # The first line: what, over how many runs, in which order, on which machine.
      def heading
        count = @doc["runs"].size
        "History of #{@doc["experiment"]}: #{@doc["figure"]["words"]} per configuration over #{count} " \
          "run#{"s" unless count == 1}, in order of #{@doc["order"]}, on #{@doc["machine"]}"
      end

      # One line naming +change+ (a change point of +config+, both of the
      # document): the run, its change against the band, what changed.
      def change_line(config, change)
        first, last = change["band_runs"].minmax.map { |i| i + 1 }
        runs = first == last ? "run #{first}" : "runs #{first}-#{last}"
        run = @doc["runs"][change["run"]]
        what = change["changes"].empty? ? "nothing in its labels changed since the run before" : change["changes"].join("; ")
        "Change point at run #{change["run"] + 1} (experiment id #{run["experiment_id"]}) of #{config["label"]}: " \
          "#{@doc["figure"]["words"]} #{signed(change["change"])} against #{runs} (band #{interval(change["band"])}); " \
          "#{what}"
      end

      private

      def figure = Report::BatchFigures.fetch(@doc["figure"]["name"])

      def runs
        lines = @doc["runs"].map do |run|
          labels = run["labels_text"].empty? ? "(no labels)" : run["labels_text"]
          format("  %3d  %s  id %-4s %s", run["run"] + 1, run["created_at"].sub("T", " ").delete_suffix("Z"),
                 run["experiment_id"], labels)
        end
        ["Runs:", *lines].join("\n")
      end

      def config(config)
        marks = config["change_points"].to_h { |c| [c["run"], c] }
        rows = config["points"].each_with_index.filter_map do |point, i|
          next nil unless point

          mark = marks[i] ? "#{MARK} #{signed(marks[i]["change"])}" : ""
          [i + 1, figure.format(point["median"]), interval(point["ci"]), batches(point), mark]
        end
        table = Text::Table.new(title: config["label"], headings: ["run", @doc["figure"]["words"], "#{confidence} CI",
                                                                   "batches", ""], rows: rows, right: (0..3).to_a, width: @width)
        [table.to_s, *config["change_points"].map { |c| change_line(config, c) }].join("\n")
      end

      def apart
        return nil if @doc["apart"].empty?

        lines = @doc["apart"].map do |run|
          medians = run["medians"].map { |id, m| "#{id}: #{figure.format(m)}" }.join("; ")
          "  experiment id #{run["experiment_id"]} (#{run["created_at"]}, #{run["labels_text"]}) on #{run["machine"]}: " \
            "#{run["differences"].join("; ")}. #{medians}"
        end
        ["Left out of the series: #{@doc["apart"].size} run#{"s" unless @doc["apart"].size == 1} on another " \
         "machine (#{@doc["figure"]["words"]} medians shown, not comparable):", *lines].join("\n")
      end

      def batches(point)
        point["failed"].to_i.positive? ? "#{point["batches"]} (+#{point["failed"]} failed)" : point["batches"].to_s
      end

      def interval(pair)
        return Units::NONE unless pair

        "#{figure.format(pair[0])}–#{figure.format(pair[1])}"
      end

      def confidence
        Units.percent_trimmed(@doc["settings"]["confidence"])
      end

      # -0.1 => "−10.0%"
      def signed(fraction)
        sign = fraction.negative? ? Gate::Markdown::MINUS : "+"
        "#{sign}#{format("%.1f", fraction.abs * 100)}%"
      end
    end
  end
end
