# frozen_string_literal: true

require "terminal-table"

module Rackbench
  class Report
    # A Report::Compare for a terminal: one row per pair (A's and B's
    # median throughput, the ratio B/A, its interval, the verdict), then
    # what A and B are.
    class CompareTerminal
      # compare :: a Report::Compare
      def initialize(compare)
        @compare = compare
      end

      # The table and the A:/B: lines, as one String.
      def render
        unit = @compare.rate_unit
        headings = ["configuration", "A #{unit}", "B #{unit}", "ratio B/A", "95% CI", "verdict"]
        table = ::Terminal::Table.new(headings: headings, rows: @compare.pairs.map { |pair| row(pair) })
        (1..4).each { |i| table.align_column(i, :right) }
        "#{table}\nA: #{@compare.a_name}\nB: #{@compare.b_name}\n"
      end

      private

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
