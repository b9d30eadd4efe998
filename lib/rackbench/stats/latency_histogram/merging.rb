# frozen_string_literal: true

module Rackbench
  module Stats
    # Merging, the reason the engine's histogram has fixed buckets.
    class LatencyHistogram
      # The exact combination of several histograms (Hashes as the engine
      # writes them, or LatencyHistograms), e.g. one per batch: counts add
      # per bucket, min and max combine, and mean and sum of squared
      # deviations merge with Chan, Golub and LeVeque's formula, as the
      # engine merges its threads. Raises ArgumentError when given none, or
      # when their scheme, unit or sub_bucket_bits differ (their buckets
      # would not line up).
      def self.merge(histograms)
        parts = histograms.map { |h| h.is_a?(LatencyHistogram) ? h : new(h) }
        raise ArgumentError, "no histograms to merge" if parts.empty?

        first = parts.first
        odd = parts.find { |h| h.scheme_name != first.scheme_name }
        if odd
          raise ArgumentError, "cannot merge histograms of different schemes: #{first.scheme_name} and #{odd.scheme_name}"
        end

        new(first.to_h.merge(merged_buckets(parts), merged_moments(parts)))
      end

      # {"buckets" => ...} with the counts of equal buckets added.
      def self.merged_buckets(parts)
        counts = Hash.new(0)
        highs = {}
        parts.each do |h|
          h.buckets.each do |low, high, count|
            if highs.fetch(low, high) != high
              raise ArgumentError, "bucket at #{low} ns ends at #{highs[low]} ns in one histogram, #{high} ns in another"
            end

            highs[low] = high
            counts[low] += count
          end
        end
        { "buckets" => counts.keys.sort.map { |low| [low, highs[low], counts[low]] } }
      end

      # Total, extremes, mean and m2 of the union. Empty parts are skipped:
      # their min_ns is 0 by the engine's convention, not a value.
      def self.merged_moments(parts)
        filled = parts.reject(&:empty?)
        n, mean, m2 = filled.reduce([0, 0.0, 0.0]) { |acc, h| chan(*acc, h.total, h.mean_ns, h.m2_ns2) }
        { "total" => n, "min_ns" => filled.map(&:min_ns).min || 0, "max_ns" => filled.map(&:max_ns).max || 0,
          "mean_ns" => mean, "m2_ns2" => m2 }
      end

      # Chan et al.: [n, mean, m2] of the union of two sets given as such.
      #   mean = mean_a + delta * n_b / n
      #   m2   = m2_a + m2_b + delta^2 * n_a * n_b / n,  delta = mean_b - mean_a
      # A naive sum of squares would lose all precision for a tight
      # distribution around a large mean.
      def self.chan(n_a, mean_a, m2_a, n_b, mean_b, m2_b)
        return [n_b, mean_b, m2_b] if n_a.zero?

        n = n_a + n_b
        delta = mean_b - mean_a
        [n, mean_a + delta * n_b / n, m2_a + m2_b + delta * delta * n_a * n_b / n]
      end
    end
  end
end
