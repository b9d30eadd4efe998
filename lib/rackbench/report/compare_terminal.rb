# frozen_string_literal: true

require_relative "diffs_terminal"

module Rackbench
  class Report
    # A Report::Compare for a terminal: one row per pair (A's and B's
    # median throughput, the ratio B/A, its interval, the verdict), then
    # for each pair with a request list a table of its pages (the same per
    # entry, with the ratio of p99s) and the entries one side only has,
    # then what A and B are.
    class CompareTerminal
      # compare :: a Report::Compare
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(compare, width: nil)
        @compare = compare
        @width = width
      end

      # The table and the A:/B: lines, as one String.
      def render
        unit = @compare.rate_unit
        headings = ["configuration", "A #{unit}", "B #{unit}", "ratio B/A", "95% CI", "verdict"]
        table = Text::Table.new(headings: headings, rows: @compare.pairs.map { |pair| row(pair) }, right: (1..4).to_a,
                                width: @width)
        pages = @compare.pairs.filter_map { |pair| pages(pair, unit) }
        inside = @compare.pairs.filter_map { |pair| inside(pair) }
        diffs = @compare.pairs.filter_map { |pair| diffs(pair) }
        text = [*machines, table.to_s, *pages, *inside, *diffs, *gems, *flags, "A: #{@compare.a_name}",
                "B: #{@compare.b_name}"].join("
") + "
"
        Text::Wrap.prose(text, @width)
      end

      private

      PAGE_HEADINGS = ["page", "A req/s", "B req/s", "ratio", "95% CI", "verdict", "p99 B/A"].freeze
      private_constant :PAGE_HEADINGS

      # The pages of +pair+, or nil without a request list on either side.
      def pages(pair, unit)
        entries = pair.entries
        return nil unless entries

        lines = []
        unless entries.pairs.empty?
          rows = entries.pairs.map do |p|
            c = p.comparison
            p99 = entries.latency_ratio(p, "p99")
            [p.label, Units.rate_rounded(p.a.rps_median), Units.rate_rounded(p.b.rps_median),
             Units.ratio(c&.ratio), Units.interval(c&.ratio_ci, :ratio, separator: "–"), c ? c.verdict : "no data",
             p99 ? format("%.2f", p99) : Units::NONE]
          end
          lines << Text::Table.new(title: "Pages of #{pair.label} (#{unit})", headings: PAGE_HEADINGS, rows: rows,
                                   right: [1, 2, 3, 4, 6], shrink: { 0 => :middle }, width: @width).to_s
        end
        lines << "  only in A (#{pair.label}): #{entries.only_a.join(", ")}" unless entries.only_a.empty?
        lines << "  only in B (#{pair.label}): #{entries.only_b.join(", ")}" unless entries.only_b.empty?
        lines.empty? ? nil : lines.join("\n")
      end

      # Where the time went between the pair's sides (DiffsTerminal), or
      # nil without a diff.
      def diffs(pair)
        pair.diffs && DiffsTerminal.new([], width: @width).one(pair.diffs.to_h,
                                                               title: "Where the time went: #{pair.label} (B against A)")
      end

      INSIDE_HEADINGS = ["figure", "A", "B", "B/A", "95% CI", "verdict"].freeze
      private_constant :INSIDE_HEADINGS

      # The inside figures of +pair+ side by side, then its headline
      # ("B against A: −38% CPU per request, +120 MB PSS"); nil unless both
      # sides have inside figures.
      def inside(pair)
        compared = pair.inside
        return nil unless compared

        rows = compared.rows.map do |r|
          [InsideSummary.label(r.name), InsideSummary.format(r.name, r.a), InsideSummary.format(r.name, r.b),
           InsideCompare.against(r.name, r.to_h),
           Units.interval(r.ratio_ci, :ratio, separator: "–"), r.verdict]
        end
        table = Text::Table.new(title: "Inside the server: #{pair.label}", headings: INSIDE_HEADINGS, rows: rows,
                                right: (1..4).to_a, width: @width)
        "#{table}\n  B against A (#{pair.label}): #{compared.headline}"
      end

      # The gems each pair's sides loaded at different versions, and its
      # flag when nothing that chooses gems differs between them; [] when
      # no pair's differ.
      def gems
        lines = @compare.pairs.reject { |pair| pair.gems.empty? }.map do |pair|
          flag = pair.flags.empty? ? "" : " [g: not a dimension of the comparison]"
          "  #{pair.label}: #{GemDifferences.text(pair.gems, a_name: "A", b_name: "B")}#{flag}"
        end
        lines.empty? ? [] : ["Gems that differ (as the servers loaded them):", *lines]
      end

      # The machines differ (compared with --different-machines): said
      # first, since it colours every ratio below.
      def machines
        differences = @compare.machine_differences
        return [] unless differences

        ["MACHINES DIFFER: A and B ran on different machines (#{MachineCheck.text(differences)}); " \
         "every ratio below measures the machines too."]
      end

      # What a reader should doubt about either side of a pair (Flags): a
      # ratio of figures that did not measure what they name is no verdict.
      def flags
        lines = @compare.pairs.flat_map do |pair|
          { "A" => pair.a, "B" => pair.b }.flat_map do |side, config|
            config.flags.map { |f| "  #{side} (#{pair.label}): #{f["message"]}" }
          end
        end
        lines.empty? ? [] : ["Flags (doubt these sides' figures):", *lines.uniq]
      end

      def row(pair)
        c = pair.comparison
        verdict = c.verdict
        if c.batches_needed
          verdict += " (#{c.batches_needed} batches to detect #{Units.percent_rounded(@compare.options.detect)})"
        end
        [pair.label, Units.rate(pair.a.rps_median), Units.rate(pair.b.rps_median), Units.ratio(c.ratio),
         Units.interval(c.ratio_ci, :ratio, separator: "–"), verdict]
      end
    end
  end
end
