# frozen_string_literal: true

module Rackbench
  module Stats
    # A latency histogram as the load engine exports it (doc/output.md,
    # "histogram"): fixed log-linear buckets of bounded relative width, so
    # histograms of several batches merge exactly by adding counts, and
    # percentiles of the merge are as accurate as those of one run.
    #
    # Percentiles follow the engine's rule (ext/rackbench_engine/histogram.c)
    # to the nanosecond: nearest rank, the midpoint of the bucket holding
    # that rank, clamped to the exact [min, max]; 0 gives the exact min and
    # 100 the exact max. So one batch's histogram reproduces the engine's
    # own latency_us.p50 ... p99_9.
    class LatencyHistogram
      KEYS = %w[scheme unit sub_bucket_bits total min_ns max_ns mean_ns m2_ns2 buckets].freeze
      DEFAULT_PERCENTILES = [50, 90, 99, 99.9].freeze
      # Percentiles for a latency-by-percentile plot on a log axis of
      # 1 / (1 - p): 1-2-5 steps into the tail (half the requests, a fifth,
      # a tenth, ... one in 100,000 slower than the point), as HdrHistogram
      # plots do.
      DEFAULT_CURVE = [0, 50, 75, 80, 90, 95, 98, 99, 99.5, 99.8, 99.9, 99.95, 99.98, 99.99,
                       99.995, 99.998, 99.999].freeze

      attr_reader :scheme, :unit, :sub_bucket_bits, :total, :min_ns, :max_ns, :mean_ns, :m2_ns2

      # hash :: the engine's histogram object (String keys, as parsed from
      #         JSON); raises ArgumentError naming what is wrong with it
      def initialize(hash)
        raise ArgumentError, "histogram must be a Hash, got #{hash.class}" unless hash.is_a?(Hash)

        h = hash.transform_keys(&:to_s)
        missing = KEYS - h.keys
        raise ArgumentError, "histogram lacks #{missing.join(", ")}" unless missing.empty?

        @scheme, @unit, @sub_bucket_bits = h.values_at("scheme", "unit", "sub_bucket_bits")
        @total, @min_ns, @max_ns = h.values_at("total", "min_ns", "max_ns")
        @mean_ns = h["mean_ns"].to_f
        @m2_ns2 = h["m2_ns2"].to_f
        @buckets = h["buckets"]
        validate!
        @buckets = @buckets.map { |b| b.map(&:to_i) }.sort.freeze
        @cumulative = cumulative_counts
      end

      # [[low_ns, high_ns, count], ...], sorted, covering [low_ns, high_ns).
      def buckets = @buckets

      def count = total

      def scheme_name = "#{scheme}/#{sub_bucket_bits} bits/#{unit}"

      def empty? = total.zero?

      # Exact extremes and mean, in microseconds; nil when empty.
      def min_us = empty? ? nil : min_ns / 1e3
      def max_us = empty? ? nil : max_ns / 1e3
      def mean_us = empty? ? nil : mean_ns / 1e3

      # Population standard deviation, as the engine reports "stdev" (nil
      # when empty; a sum of squares a rounding error below 0 reads as 0).
      def stddev_us
        return nil if empty?

        m2_ns2.positive? ? Math.sqrt(m2_ns2 / total) / 1e3 : 0.0
      end

      # The p-th percentile (p in 0..100, e.g. 99.9) in nanoseconds, by the
      # engine's rule; nil when empty.
      def percentile_ns(p)
        Check.within(p, "percentile", 0, 100)
        return nil if empty?
        return min_ns if p.zero?
        return max_ns if p >= 100

        rank = self.class.nearest_rank(total, p)
        # the engine walks to the last bucket at worst; so does this
        i = @cumulative.bsearch_index { |seen| seen >= rank } || (@buckets.size - 1)
        low, high, = @buckets[i]
        # widths are powers of two: the midpoint is an exact integer, and
        # the bucket's low for width 1
        (low + (high - low) / 2).clamp(min_ns, max_ns)
      end

      # The p-th percentile in microseconds (see percentile_ns).
      def percentile_us(p)
        ns = percentile_ns(p)
        ns && ns / 1e3
      end

      # {"p50" => us, "p90" => ..., "p99.9" => ..., "max" => ..., "mean" => ...}
      # for the given percentiles (values nil when empty).
      def percentiles_us(list = DEFAULT_PERCENTILES)
        result = list.to_h { |p| ["p#{p == p.to_i ? p.to_i : p}", percentile_us(p)] }
        result.merge("max" => max_us, "mean" => mean_us)
      end

      # [[percentile, latency_us], ...] for a latency-by-percentile plot: the
      # given percentiles that the count supports (p such that at least one
      # value lies above it: 99.9 needs 1,000 values), then [100.0, max].
      # Empty when the histogram is.
      def curve_us(points = DEFAULT_CURVE)
        return [] if empty?

        supported = points.select { |p| p < 100 && (100 - p) * total >= 100 * (1 - 1e-9) }
        (supported.map { |p| [p.to_f, percentile_us(p)] } << [100.0, max_us]).uniq
      end

      # The same Hash shape as the engine's histogram object.
      def to_h
        { "scheme" => scheme, "unit" => unit, "sub_bucket_bits" => sub_bucket_bits, "total" => total,
          "min_ns" => min_ns, "max_ns" => max_ns, "mean_ns" => mean_ns, "m2_ns2" => m2_ns2,
          "buckets" => buckets.map(&:dup) }
      end

      # The engine's nearest rank, ceil(p / 100 * total), between 1 and total.
      # Why the 1e-12 shrink: p / 100 * total is inexact in binary (99.9 is
      # stored as 99.900000000000006), which would push an exact rank such
      # as 999 of 1000 up to 1000. Same operations in the same order as
      # histogram.c, so the same doubles and the same rank.
      def self.nearest_rank(total, p)
        exact = p / 100.0 * total
        (exact - exact * 1e-12).ceil.clamp(1, total)
      end

      private

      def cumulative_counts
        seen = 0
        @buckets.map { |_, _, count| seen += count }
      end
    end
  end
end

require_relative "latency_histogram/merging"
require_relative "latency_histogram/validation"
