# frozen_string_literal: true

module Rackbench
  module Profile
    # A configuration's profile for a terminal: a header naming what was
    # sampled, then the top frames by self and by total samples, each with
    # both shares. Reads the report document's "profiles" entries
    # (Report::Profiles#to_a), so `report` and `profile` print the same.
    module Terminal
      ROWS = 10
      NAME_WIDTH = 60

      module_function

      # Text (lines joined, ending in a newline) for entries, an Array of
      # the report document's profile Hashes; "" for none.
      def render(entries, rows: ROWS)
        entries.map { |entry| section(entry, rows) }.join("\n")
      end

      def section(entry, rows)
        lines = [header(entry)]
        Array(entry["missing"]).each do |missing|
          lines << "  (process #{missing["pid"]} gave no profile: #{missing["reason"]})"
        end
        if entry["tool"] == "objspace"
          # One frame per class, each its own stack: self and total are one.
          lines << table(entry["top_self"].first(rows), heading: "Top classes", column: "class")
        else
          lines << table(entry["top_self"].first(rows), heading: "Top frames by self")
          lines << table(entry["top_total"].first(rows), heading: "Top frames by total")
        end
        "#{lines.join("\n")}\n"
      end

      def header(entry)
        trials = entry["trials"].size
        if entry["tool"] == "objspace"
          return "Allocations by class of #{entry["config_id"]}: objspace's census, " \
                 "#{Units.integer(entry["samples"])} objects (the windows' allocations) from #{entry["processes"]} " \
                 "process(es), #{trials} trial#{"s" if trials != 1} (not counted in the figures above)"
        end

        every = entry["mode"] == "object" ? "every #{entry["interval"]} allocation(s)" : "every #{entry["interval"]} µs"
        if entry["sample_us"]
          every += " asked, one sample per #{Units.integer(entry["sample_us"].round)} µs of CPU measured"
        end
        "Profile of #{entry["config_id"]}: #{entry["tool"]} #{entry["mode"]}, #{every}, " \
          "#{Units.integer(entry["samples"])} samples from #{entry["processes"]} process(es), " \
          "#{trials} trial#{"s" if trials != 1} (not counted in the figures above)"
      end

      def table(rows, heading:, column: "frame")
        lines = ["  #{heading}:", format("  %7s %7s  %s", "self", "total", column)]
        rows.each do |row|
          lines << format("  %6.1f%% %6.1f%%  %s", row["self_share"] * 100, row["total_share"] * 100, label(row))
        end
        lines.join("\n")
      end

      def label(row)
        where = row["file"].to_s.empty? ? "" : "  #{shorten(row["file"])}#{":#{row["line"]}" if row["line"]}"
        "#{row["name"]}#{where}"
      end

      # The end of a long path, where its gem and file are.
      def shorten(path)
        path.size > NAME_WIDTH ? "…#{path[-(NAME_WIDTH - 1)..]}" : path
      end
    end
  end
end
