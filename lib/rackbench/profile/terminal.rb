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
        lines << table("by self", entry["top_self"].first(rows))
        lines << table("by total", entry["top_total"].first(rows))
        "#{lines.join("\n")}\n"
      end

      def header(entry)
        every = entry["mode"] == "object" ? "every #{entry["interval"]} allocation(s)" : "every #{entry["interval"]} µs"
        trials = entry["trials"].size
        "Profile of #{entry["config_id"]}: #{entry["tool"]} #{entry["mode"]}, #{every}, " \
          "#{Units.integer(entry["samples"])} samples from #{entry["processes"]} process(es), " \
          "#{trials} trial#{"s" if trials != 1} (not counted in the figures above)"
      end

      def table(title, rows)
        lines = ["  Top frames #{title}:", format("  %7s %7s  %s", "self", "total", "frame")]
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
