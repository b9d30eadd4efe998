# frozen_string_literal: true

module Rackbench
  class Report
    # How every view writes a diff's rows (Report::Diffs#to_h's, as the
    # document holds them): the terminal, the HTML page, compare and the
    # gate's Markdown take their cells from here, so a function reads the
    # same everywhere. Plain text; a view escapes it for its format.
    module DiffText
      MINUS = "\u2212"
      FUNCTION_HEADINGS = ["function", "object", "A /request", "B /request", "difference", "interval", "share",
                           "per call"].freeze
      FRAME_HEADINGS = ["frame", "file", "A self", "B self", "difference", "interval", "share", "B total"].freeze
      CENSUS_HEADINGS = ["class", "", "A", "B", "difference", "interval", "share", "B total"].freeze
      ALLOCATION_HEADINGS = ["figure", "A", "B", "difference", "ratio", "ratio interval", "verdict"].freeze
      # Which side a row appears on alone, as a mark after its name.
      ONLY = { "a" => " (A only)", "b" => " (B only)" }.freeze
      # After the name of a row whose interval excludes 0.
      CHANGED = " *"

      module_function

      # +value+ with its sign, in the diff's +unit+ (:count for
      # instructions, "microseconds" or "objects" for a profile's amounts).
      def signed(value, unit = :count)
        return Units::NONE if value.nil?

        text = amount(value.abs, unit)
        return text if text.match?(/\A0(\.0+)?( |\z)/)

        "#{value.negative? ? MINUS : "+"}#{text}"
      end

      # +value+ unsigned: "45,001", "12.3 µs", "0.52".
      def amount(value, unit = :count)
        return Units::NONE if value.nil?

        case unit
        when "microseconds" then value.abs >= 1000 ? format("%.2f ms", value / 1000.0) : format("%.1f µs", value)
        when "objects" then format("%.2f", value)
        else value.abs >= 10 ? Units.count_grouped(value) : format("%.2f", value)
        end
      end

      def interval(pair, unit = :count)
        return Units::NONE unless pair

        "#{signed(pair[0], unit)} to #{signed(pair[1], unit)}"
      end

      # A share of the whole difference, signed: "100.0%", "−0.1%".
      def share(value)
        return Units::NONE if value.nil?

        text = Units.percent(value.abs, digits: 1)
        value.negative? && !text.match?(/\A0\.0%\z/) ? "#{MINUS}#{text}" : text
      end

      # A row's name with its marks: one side only, changed.
      def name(row, key = "name")
        "#{row[key]}#{ONLY[row["only"]]}#{CHANGED if row["changed"]}"
      end

      # The cells of a function row (FUNCTION_HEADINGS).
      def function_cells(row)
        [name(row), row["object"].to_s, amount(row["a"]), amount(row["b"]), signed(row["difference"]),
         interval(row["difference_ci"]), share(row["share"]), signed(row["per_call_difference"])]
      end

      # The cells of a profile's frame row (FRAME_HEADINGS).
      def frame_cells(row, unit)
        [name(row), short_file(row["file"]), amount(row["a"], unit), amount(row["b"], unit),
         signed(row["difference"], unit), interval(row["difference_ci"], unit), share(row["share"]),
         amount(row["b_total"], unit)]
      end

      # The cells of an allocation row (ALLOCATION_HEADINGS).
      def allocation_cells(row)
        format = ->(value) { InsideSummary.format(row["name"], value) }
        difference = row["difference"]
        [row["words"], format.call(row["a"]), format.call(row["b"]),
         difference.nil? ? Units::NONE : "#{difference.negative? ? MINUS : "+"}#{format.call(difference.abs)}",
         Units.ratio(row["ratio"]), Units.interval(row["ratio_ci95"], :ratio, separator: "–"), row["verdict"] || Units::NONE]
      end

      # The first line of a function diff: the whole difference, its
      # interval, and how many functions changed at which confidence.
      def functions_headline(functions)
        confidence = Units.percent_trimmed(functions["confidence"], digits: 2)
        "#{signed(functions["difference"])} instructions per request (#{interval(functions["difference_ci"])}); " \
          "#{functions["changed"]} of #{functions["compared"]} functions changed at #{confidence} (family)"
      end

      # The first line of a profile diff.
      def profile_headline(profile)
        confidence = Units.percent_trimmed(profile["confidence"], digits: 2)
        batches = profile["batches"].join(" and ")
        census = census?(profile)
        what = census ? "allocations by class" : "#{profile["tool"]} #{profile["mode"]}"
        "#{what}: #{signed(profile["difference"], profile["unit"])} #{census ? "objects " : ""}per request " \
          "(#{interval(profile["difference_ci"], profile["unit"])}); #{profile["changed"]} " \
          "#{census ? "classes" : "frames"} changed at #{confidence} (family), over #{batches} profiled trials" \
          "#{scaled_note(profile)}"
      end

      # How a profile diff's amounts were made, where they are shares of the
      # profiled samples times a figure of the plain trials (ProfileDiff).
      def scaled_note(profile)
        return "" unless profile["scaled_by"]

        "; each frame its share of the samples times the measured #{InsideSummary.label(profile["scaled_by"])}"
      end

      # The title of a profile diff's table.
      def profile_title(profile)
        return "Allocations by class (objects per request, objspace's census)" if census?(profile)

        "Profile by frame (self #{profile["unit"] == "objects" ? "objects" : "time"} per request)"
      end

      def frame_headings(profile)
        census?(profile) ? CENSUS_HEADINGS : FRAME_HEADINGS
      end

      # Whether a profile counts allocations by class (agent/allocation_census.rb):
      # its frames are classes, not code.
      def census?(profile)
        profile["tool"] == "objspace"
      end

      # A source file shortened to what names it: a gem's "rails-7.2.4/...",
      # the last two parts otherwise.
      def short_file(file)
        text = file.to_s
        return text if text.empty? || text.start_with?("<")
        return Regexp.last_match(1) if text =~ %r{/gems/([^/]+/.*)\z}

        text.split("/").last(2).join("/")
      end
    end
  end
end
