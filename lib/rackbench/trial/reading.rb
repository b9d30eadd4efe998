# frozen_string_literal: true

module Rackbench
  module Trial
    # How a kind reads the figures of its records (Record#rate and the
    # rest): the one place that knows which key of its result document is
    # the throughput, where latency and memory are. Each kind extends this
    # with a module of its own (Trial::Http::Reading, Trial::Script::Reading)
    # and overrides what it measures; what it does not measure is nil.
    module Reading
      # The defaults, for a kind that reads nothing of its own (Kind.reading).
      extend self

      # The unit of #rate; a kind whose unit depends on what a record
      # measured (a WebSocket workload's) reads it from +record+.
      def rate_unit(_record = nil) = "req/s"
      def rate(_record) = nil
      def requests(_record) = nil
      def failed_requests(_record) = nil
      def attempts(_record) = nil
      def latency_us(_record) = nil
      def histogram(_record) = nil
      def measure_s(_record) = nil
      def warmup_s(_record) = nil
      def rss_peak_bytes(_record) = nil
      def pss_peak_bytes(_record) = nil
      def cpu_user_s(_record) = nil
      def cpu_system_s(_record) = nil
      # The measured window's and the warmup's per-second timelines
      # (Arrays of {"second", "requests", "errors", "bytes", "p50_us",
      # "p99_us"}), and the warmup's requests and failures.
      def timeline(_record) = nil
      def warmup_timeline(_record) = nil
      def warmup(_record) = nil
      # Received bytes per second, and the offered rate in open loop.
      def bytes_per_s(_record) = nil
      def mb_per_s(_record) = nil
      def protocol(_record) = nil
      def offered_rps(_record) = nil
      # An https:// run's TLS document (handshakes and what they cost).
      def tls(_record) = nil

      # The progress line's result part for an ok record, e.g.
      # "ok 1234.5 req/s, p99 1.20ms".
      def summary(record)
        format("ok %.1f %s", record.rate.to_f, rate_unit)
      end
    end
  end
end
