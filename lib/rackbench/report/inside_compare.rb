# frozen_string_literal: true

module Rackbench
  class Report
    # The inside figures of B against A (two InsideSummary objects), side by
    # side: per figure both medians, their difference, the ratio of B's
    # median to A's with its bootstrap interval (each side's batches
    # resampled, as throughput's) and a verdict, "higher" (interval above
    # 1), "lower" (below 1), "no difference detected" (spans 1 or within the
    # equivalence band) or "too few batches"; and a headline in words:
    # "−38% CPU per request, +120 MB PSS".
    #
    # A figure with a value of 0 or below in some batch (no GC in the
    # window, memory that shrank) has no ratio: its verdict is "no ratio"
    # and the difference of medians speaks for it.
    class InsideCompare
      HIGHER = "higher"
      LOWER = "lower"
      NO_RATIO = "no ratio"

      # How the headline names a relative change of each figure; memory
      # is written as a difference in MB instead (MEMORY_WORDS).
      RELATIVE_WORDS = {
        "cpu_us_per_request" => "CPU per request", "allocations_per_request" => "allocations per request",
        "gc_per_1k_requests" => "GC runs per request", "gc_ms_per_1k_requests" => "GC time per request",
        "major_gc_per_1k_requests" => "major GCs per request"
      }.freeze
      # The headline's memory figure: the tree's PSS, else a worker's.
      MEMORY_WORDS = { "total_pss_bytes" => "PSS", "worker_pss_bytes" => "PSS per worker" }.freeze
      # The minus sign of the headline (U+2212), not a hyphen.
      MINUS = "\u2212"

      # One figure compared.
      Row = Struct.new(:name, :a, :b, :difference, :ratio, :ratio_ci, :verdict, :explanation, keyword_init: true) do
        def to_h
          { "name" => name, "a_median" => a, "b_median" => b, "difference" => difference, "ratio" => ratio,
            "ratio_ci95" => ratio_ci, "verdict" => verdict, "explanation" => explanation }
        end
      end

      attr_reader :rows

      # a, b :: InsideSummary (A is the baseline)
      # options :: the Report::Options judging them (Options#compare_options)
      def initialize(a, b, options)
        @options = options
        @rows = InsideSummary::FIGURES.keys.filter_map do |name|
          fa = a[name]
          fb = b[name]
          fa && fb ? row(name, fa, fb) : nil
        end
      end

      # The headline (InsideCompare.headline of #to_h's rows).
      def headline
        InsideCompare.headline(@rows.map(&:to_h))
      end

      # {"figures" => [Row#to_h, ...], "headline" => String}
      def to_h
        { "figures" => @rows.map(&:to_h), "headline" => headline }
      end

      # The changes that were detected, in words, from compared rows (Row#to_h
      # Hashes, as a saved document holds them): "−38% CPU per request,
      # +120 MB PSS"; "no difference detected inside the server" when none
      # was; "too few batches to judge the inside figures" when no figure
      # had enough. Memory changes are differences of medians in MB (10^6
      # bytes), the others B's median relative to A's, rounded to a percent.
      def self.headline(rows)
        judged = rows.reject { |r| [Stats::TOO_FEW, NO_RATIO].include?(r["verdict"]) }
        return "too few batches to judge the inside figures" if judged.empty? && rows.any?
        return "no inside figures on both sides" if rows.empty?

        detected = judged.select { |r| [HIGHER, LOWER].include?(r["verdict"]) }
        parts = RELATIVE_WORDS.filter_map do |name, words|
          r = detected.find { |row| row["name"] == name }
          r && "#{signed(((r["ratio"] - 1) * 100).round)}% #{words}"
        end
        memory = MEMORY_WORDS.keys.find { |name| judged.any? { |r| r["name"] == name } }
        r = memory && detected.find { |row| row["name"] == memory }
        parts << "#{signed((r["difference"] / 1e6).round)} MB #{MEMORY_WORDS[memory]}" if r
        parts.empty? ? "no difference detected inside the server" : parts.join(", ")
      end

      # +n+ with its sign: "+120", "−38", "0".
      def self.signed(number)
        return "0" if number.zero?

        number.positive? ? "+#{number}" : "#{MINUS}#{number.abs}"
      end

      # The "vs baseline" cell of a compared row (a Row#to_h Hash, or nil):
      # the ratio, or the difference of medians where there is no ratio
      # ("+0.20 diff").
      def self.against(name, row)
        return Units::NONE unless row
        return Units.ratio(row["ratio"]) if row["ratio"]
        return Units::NONE unless row["difference"]

        sign = row["difference"].positive? ? "+" : ""
        "#{sign}#{InsideSummary.format(name, row["difference"])} diff"
      end

      private

      def row(name, fa, fb)
        difference = fb.median - fa.median
        unless (fa.values + fb.values).all?(&:positive?)
          return Row.new(name: name, a: fa.median, b: fb.median, difference: difference, verdict: NO_RATIO,
                         explanation: "a batch's value is 0 or below: compare the difference of medians")
        end

        c = Stats.compare(fa.values, fb.values, **@options.compare_options)
        verdict = { Stats::FASTER => HIGHER, Stats::SLOWER => LOWER }.fetch(c.verdict, c.verdict)
        Row.new(name: name, a: fa.median, b: fb.median, difference: difference, ratio: c.ratio, ratio_ci: c.ratio_ci,
                verdict: verdict, explanation: c.explanation)
      end
    end
  end
end
