# frozen_string_literal: true

module Rackbench
  class Report
    # The pages of one pair of `rackbench compare`: each entry of the
    # request list that both sides have (matched by label: the entry's name,
    # "#INDEX" when unnamed) compared as compare compares configurations:
    # the ratio of B's median req/s to A's with its bootstrap interval and
    # verdict (Stats.compare, the report's options), beside both sides'
    # p50 and p99 and their ratios. Entries on one side only are listed as
    # such, never paired with something else.
    class EntryCompare
      # One entry both sides have: its label, A's and B's EntrySummary and
      # the Stats::Comparison of their throughput (nil when a batch of
      # either side had no response of it: a weight-0 entry).
      Pair = Struct.new(:label, :a, :b, :comparison, keyword_init: true)

      attr_reader :pairs, :only_a, :only_b

      # The comparison of +a+'s and +b+'s entries (ConfigSummary), or nil
      # when neither has a request list.
      def self.of(a, b, options)
        return nil if a.entries.nil? && b.entries.nil?

        new(Array(a.entries), Array(b.entries), options)
      end

      # a, b :: Arrays of EntrySummary; options :: Report::Options
      def initialize(a, b, options)
        by_label = b.to_h { |e| [e.label, e] }
        @pairs = a.filter_map do |entry|
          other = by_label[entry.label]
          other && Pair.new(label: entry.label, a: entry, b: other, comparison: compare(entry, other, options))
        end
        @only_a = a.map(&:label) - b.map(&:label)
        @only_b = b.map(&:label) - a.map(&:label)
      end

      # The pair's "entries" object of the comparison document (doc/output.md).
      def to_h
        { "pairs" => @pairs.map { |pair| pair_hash(pair) }, "only_a" => @only_a, "only_b" => @only_b }
      end

      # B's latency percentile +key+ ("p50", "p99") over A's for +pair+ (> 1: B is slower there); nil
      # without both.
      def latency_ratio(pair, key)
        a = pair.a.latency_us&.fetch(key, nil)
        b = pair.b.latency_us&.fetch(key, nil)
        a&.positive? && b ? b / a : nil
      end

      private

      def compare(a, b, options)
        values_a = a.rps_values
        values_b = b.rps_values
        return nil if values_a.empty? || values_b.empty? || (values_a + values_b).any? { |v| !v.positive? }

        Stats.compare(values_a, values_b, **options.compare_options)
      end

      def pair_hash(pair)
        c = pair.comparison
        { "label" => pair.label, "a" => side(pair.a), "b" => side(pair.b), "ratio" => c&.ratio,
          "ratio_ci95" => c&.ratio_ci, "verdict" => c ? c.verdict : "no data",
          "p50_ratio" => latency_ratio(pair, "p50"), "p99_ratio" => latency_ratio(pair, "p99") }
      end

      def side(entry)
        latency = entry.latency_us || {}
        { "batches" => entry.batches, "rps_median" => entry.rps_median, "rps_ci95" => entry.rps_ci,
          "p50_us" => latency["p50"], "p99_us" => latency["p99"], "error_rate" => entry.error_rate }
      end

    end
  end
end
