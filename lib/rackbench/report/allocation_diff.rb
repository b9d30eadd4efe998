# frozen_string_literal: true

module Rackbench
  class Report
    # Allocations and GC of B against A, from the inside agent's counts
    # (InsideSummary): allocations per request, GC runs, major GCs and GC
    # time per 1,000 requests, each side's median over its batches, the
    # difference of the medians, and the ratio of the medians with its
    # bootstrap interval and verdict, as the inside section has them
    # (InsideCompare). The agent counts every allocation, not which class
    # each was of: an allocation profile (`profile: { mode: object }`)
    # says where they come from, in the profile diff.
    class AllocationDiff
      FIGURES = %w[allocations_per_request gc_per_1k_requests major_gc_per_1k_requests gc_ms_per_1k_requests].freeze

      # The diff of two InsideSummary objects (nil for a side without
      # one), or nil when no figure is on both sides.
      def self.of(a, b, options)
        return nil unless a && b

        diff = new(a, b, options)
        diff.rows.empty? ? nil : diff
      end

      attr_reader :rows

      def initialize(a, b, options)
        compared = InsideCompare.new(a, b, options).rows.to_h { |row| [row.name, row] }
        @rows = FIGURES.filter_map do |name|
          fa = a[name]
          fb = b[name]
          next unless fa && fb

          row = compared[name]
          { "name" => name, "words" => InsideSummary.label(name), "a" => fa.median, "b" => fb.median,
            "difference" => fb.median - fa.median, "ratio" => row&.ratio, "ratio_ci95" => row&.ratio_ci, "verdict" => row&.verdict }
        end
      end

      # The report document's "allocations" entry of a diff.
      def to_a = @rows
    end
  end
end
