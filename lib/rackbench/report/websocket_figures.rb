# frozen_string_literal: true

module Rackbench
  class Report
    # A WebSocket configuration's figures over its ok batches (Trial::Ws's
    # records, read through their Reading): the clients connected and how
    # long until all were, why any failed or were lost, the round trip's
    # p95 (from the batches' merged histograms, which merge exactly),
    # the broadcasts' delivery (receipts over receipts due, summed over
    # the batches), the server's memory per connection and its CPU per
    # broadcast (medians over the batches). Pure functions; nil where a
    # configuration has none (an HTTP one).
    module WebsocketFigures
      # Trial::Ws's kind (named here, so that reading a report loads no trial kind).
      KIND = "ws"

      module_function

      # Whether records (Trial::Record) are a WebSocket workload's.
      def websocket?(records)
        records.any? { |record| record.kind == KIND }
      end

      # The median of the batches' clients connected, and the clients asked.
      def connected(records) = median(values(records, :connected))
      def requested(records) = values(records, :requested).max

      # The median of the batches' seconds until the last client was
      # ready; nil when a batch never had every client ready.
      def time_to_all_s(records)
        times = values(records, :time_to_all_s, compact: false)
        times.empty? || times.any?(&:nil?) ? nil : median(times)
      end

      # Clients failed before ready or lost after, by reason, summed over
      # +records+ (every trial's, the failed ones' too: a failure is
      # counted, never dropped): { "malformed" => 1 }.
      def connection_failures(records)
        return nil unless websocket?(records)

        records.filter_map { |record| reading(record)&.connection_failures(record) }
               .reduce({}) { |all, counts| all.merge(counts) { |_, a, b| a + b } }
      end

      # The round trip's 95th percentile (µs) over the merged histogram.
      def rtt_p95_us(histogram)
        histogram&.percentiles_us([95])&.fetch("p95", nil)
      end

      # Receipts over receipts due, over every batch: a broadcast some
      # client never got counts against it, in whichever batch.
      def delivery_ratio(records)
        expected = values(records, :expected).sum
        expected.positive? ? values(records, :delivered).sum.fdiv(expected) : nil
      end

      def memory_per_connection_bytes(records) = median(values(records, :memory_per_connection_bytes))
      def cpu_us_per_broadcast(records) = median(values(records, :cpu_us_per_broadcast))

      # "2 refused, 1 malformed".
      def failures_text(failures)
        return Units::NONE if failures.nil?
        return "0" if failures.empty?

        failures.map { |kind, n| "#{n} #{kind}" }.join(", ")
      end

      def reading(record)
        reading = record.reading
        reading.respond_to?(:connection_failures) ? reading : nil
      end

      def values(records, figure, compact: true)
        found = records.filter_map { |record| reading(record) && [reading(record).public_send(figure, record)] }.map(&:first)
        compact ? found.compact : found
      end

      def median(values)
        values.empty? ? nil : Stats.median(values)
      end
    end
  end
end
