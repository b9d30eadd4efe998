# frozen_string_literal: true

module Rackbench
  module Stats
    # Checking a histogram Hash against doc/output.md before trusting it.
    class LatencyHistogram
      INTEGER_KEYS = %w[sub_bucket_bits total min_ns max_ns].freeze

      private

      def validate!
        unless scheme.is_a?(String) && !scheme.empty?
          raise ArgumentError, "histogram scheme must be a non-empty String, got #{scheme.inspect}"
        end
        raise ArgumentError, "histogram unit must be ns, got #{unit.inspect}" unless unit == "ns"

        INTEGER_KEYS.zip([sub_bucket_bits, total, min_ns, max_ns]).each do |key, v|
          raise ArgumentError, "histogram #{key} must be an Integer >= 0, got #{v.inspect}" unless v.is_a?(Integer) && v >= 0
        end
        validate_buckets!
      end

      def validate_buckets!
        raise ArgumentError, "histogram buckets must be an Array, got #{@buckets.class}" unless @buckets.is_a?(Array)

        @buckets.each do |bucket|
          next if bucket.is_a?(Array) && bucket.size == 3 && bucket.all? { |v| v.is_a?(Integer) && v >= 0 } &&
                  bucket[0] < bucket[1]

          raise ArgumentError, "histogram bucket must be [low_ns, high_ns, count] with low < high, got #{bucket.inspect}"
        end
        sum = @buckets.sum { |b| b[2] }
        raise ArgumentError, "histogram bucket counts add up to #{sum}, not its total #{total}" unless sum == total
      end
    end
  end
end
