# frozen_string_literal: true


module Rackbench
  class Report
    # The "Pages" section of the terminal report: for each configuration
    # with a request list, one row per entry (page): its share of the mix,
    # its median req/s with the interval as ± percent, p50 and p99 from its
    # merged histograms, and what failed in the warmups and the measured
    # windows (warmup first: a login that failed there explains the rest).
    # Fits the width: long page names are shortened in the middle and
    # failure lists wrapped (whole with --wide, in the JSON and the HTML
    # report).
    class EntriesTerminal
      HEADINGS = ["page", "share", "req/s", "95% CI", "p50", "p99", "failed"].freeze

      # configs :: [[label, entries]] where entries is configs.entries of
      #            the report document (Hashes)
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(configs, width: nil)
        @configs = configs.reject { |_, entries| entries.nil? || entries.empty? }
        @width = width
      end

      # The section as text, or nil when no configuration has entries.
      def render
        return nil if @configs.empty?

        tables = @configs.map { |label, entries| table(label, entries) }
        ["Pages (request-list entries, ok batches together):", *tables].join("\n")
      end

      private

      # The configuration's table, then a line for each first entry (a
      # login) that the windows never saw: it is sent once per session,
      # when the session starts in the warmup, so its row has no figure;
      # the line says where it went ("login: sent in the warmups only (4
      # requests, none failed)").
      def table(label, entries)
        rows = entries.map { |e| row(e) }
        table = Text::Table.new(title: label, headings: HEADINGS, rows: rows, right: (1..5).to_a, shrink: { 0 => :middle },
                                width: @width)
        [table.to_s, *warmup_only_notes(entries)].join("\n")
      end

      def warmup_only_notes(entries)
        entries.select { |e| e["first"] && e["requests"].to_i.zero? && e["warmup"].is_a?(Hash) }.map do |e|
          warmup = e["warmup"]
          failed = warmup["failed"].to_i
          "  #{e["label"] || e["name"]}: sent in the warmups only " \
            "(#{warmup["requests"].to_i} requests, #{failed.zero? ? "none" : failed} failed)"
        end
      end

      def row(entry)
        latency = entry["latency_us"] || {}
        [EntryText.name(entry), Units.percent(entry["share"], digits: 1),
         Units.rate_rounded(entry["rps_median"]), Units.relative_interval(entry["rps_ci95"], entry["rps_median"]),
         Units.latency_us(latency["p50"]), Units.latency_us(latency["p99"]),
         failures(entry)]
      end

      # "warmup 4 of 44 (422: 4); 422: 5"
      def failures(entry)
        warmup = EntryText.warmup_failures(entry)
        [("warmup #{warmup}" unless warmup.empty?), EntryText.measured_failures(entry)].compact
                                                                                     .reject(&:empty?).join("; ")
      end
    end
  end
end
