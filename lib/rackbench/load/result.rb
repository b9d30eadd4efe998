# frozen_string_literal: true

require_relative "contract"

module Rackbench
  # The load engine's result document (doc/output.md), checked against the
  # contract on construction so that a malformed document fails loudly here
  # rather than as a nil deep inside a report.
  class LoadResult
    include LoadContract

    FORMAT = "rackbench-engine"
    FORMAT_VERSION = 1
    # key => the classes its value may have
    REQUIRED = {
      "format" => [String], "format_version" => [Integer], "engine_version" => [String],
      "interrupted" => [true.class, false.class], "settings" => [Hash],
      "requests" => [Integer], "duration_s" => [Numeric], "rps" => [Numeric], "offered_rps" => [Numeric, NilClass],
      "bytes" => [Integer], "bytes_per_s" => [Numeric], "status" => [Hash], "errors" => [Hash],
      "latency_us" => [Hash], "histogram" => [Hash], "timeline" => [Array],
      "late" => [Hash, NilClass], "connections" => [Hash], "abandoned" => [Integer],
      "warmup" => [Hash], "cpu" => [Hash], "memory" => [Hash]
    }.freeze
    LATENCY_KEYS = %w[min mean stdev max p50 p90 p99 p99_9].freeze
    # Every error kind the engine counts, in its order. capture and redirect
    # came with request-list sessions (doc/requests.md): a document from an
    # engine before them lacks both and is still valid.
    # stream_reset, goaway, not_h2c and h2_protocol came with HTTP/2 (h2c),
    # expect with @expect (doc/requests.md), tls with https://.
    ERROR_KINDS = %w[connect read write timeout parse capture redirect stream_reset goaway not_h2c h2_protocol
                     expect tls].freeze
    REQUIRED_ERROR_KINDS = %w[connect read write timeout parse].freeze
    # entries[] (a request list's per-entry results) => the classes its
    # values may have; entries is absent from results stored before it.
    ENTRY = {
      "index" => [Integer], "name" => [String, NilClass], "first" => [true.class, false.class],
      "weight" => [Integer], "requests" => [Integer], "hops" => [Integer], "status" => [Hash],
      "errors" => [Hash], "latency_us" => [Hash], "histogram" => [Hash], "warmup" => [Hash]
    }.freeze
    CPU_KEYS = %w[user_s system_s wall_s utilization us_per_request threads saturated].freeze
    # late (open loop only) => the classes its values may have
    LATE = {
      "threshold_us" => [Numeric], "requests" => [Integer], "fraction" => [Numeric], "mean_us" => [Numeric],
      "p50_us" => [Numeric], "p99_us" => [Numeric], "max_us" => [Numeric], "scheduled" => [Integer],
      "unsent" => [Integer]
    }.freeze

    # h2 (an h2c run's connection and stream ends; null for http1, absent
    # before HTTP/2) => the classes its values may have
    H2 = {
      "not_h2c_connections" => [Integer], "protocol_errors" => [Integer], "reason" => [String, NilClass],
      "goaways" => [Integer], "goaway_codes" => [Hash], "resets" => [Hash],
      "server_max_concurrent_streams" => [Integer, NilClass]
    }.freeze

    # service.connections / service.streams (which slots the server served
    # in the window; absent before it was counted) => the classes its values may have
    SERVICE = {
      "slots" => [Integer], "active" => [Integer], "served" => [Integer], "unserved" => [Integer],
      "unserved_slots" => [Array], "max_wait_us" => [Numeric]
    }.freeze
    # probes.start / probes.end (every slot's session probe at the window's edges)
    PROBE_POINT = {
      "passed" => [Integer], "failed" => [Integer], "unchecked" => [Integer], "failed_slots" => [Array],
      "reason" => [String, NilClass]
    }.freeze
    # tls (an https:// run's handshakes; null for http://, absent before
    # TLS) => the classes its values may have; tls.warmup has the counts.
    TLS_COUNTS = {
      "handshakes" => [Integer], "resumed" => [Integer], "handshake_responses" => [Integer],
      "handshake_response_fraction" => [Numeric], "failures" => [Hash]
    }.freeze
    TLS = TLS_COUNTS.merge(
      "version" => [String, NilClass], "cipher" => [String, NilClass], "alpn" => [String, NilClass],
      "full_handshake_us" => [Hash], "resumed_handshake_us" => [Hash], "reason" => [String, NilClass],
      "warmup" => [Hash]
    ).freeze
    # Why a TLS connection failed (tls.failures' keys).
    TLS_FAILURES = %w[not_tls verify alpn handshake protocol].freeze

    attr_reader :data, :warning

    # data: the parsed JSON Hash. warning: a line the engine wrote on stderr.
    def initialize(data, warning: nil)
      @data = data
      @warning = warning
      validate!
    end

    def requests = data["requests"]
    def duration_s = data["duration_s"]
    def rps = data["rps"]
    def bytes = data["bytes"]
    def bytes_per_s = data["bytes_per_s"]
    def latency_us = data["latency_us"]
    def errors = data["errors"]
    def status = data["status"]
    def cpu = data["cpu"]
    def warmup = data["warmup"]
    def settings = data["settings"]
    def connections = data["connections"]
    def late = data["late"]

    # A request list's per-entry results (doc/output.md, "entries"): an
    # Array of Hashes in file order, each with its own requests, hops,
    # status, errors, latency_us, histogram and warmup counts; nil for a
    # single URL and for results from engines before per-entry results.
    def entries = data["entries"]
    # The rate the engine asked of the server, requests/s over the measured
    # window (scheduled requests / duration_s); nil in closed loop.
    def offered_rps = data["offered_rps"]

    # Open loop: requests scheduled in the measured window that were never
    # sent, because no connection came free before its end; nil in closed
    # loop. For a run that was not interrupted, late["scheduled"] equals
    # requests + error_count + unsent.
    def unsent = late && late["unsent"]

    def interrupted? = data["interrupted"]

    # Which connection slots (and h2c stream slots) the server served in the
    # window, and the longest wait (doc/output.md, "service"): {"connections"
    # => {...}, "streams" => {...} or nil}; nil from engines before it.
    def service = data["service"]

    # Every slot's session probes (doc/requests.md, "Session probes"):
    # {"entries", "slots", "start", "end"}; nil without probe entries.
    def probes = data["probes"]

    # The @users file's count and columns; nil without @users.
    def users = data["users"]

    # "http1" or "h2c" (results before HTTP/2 were all http1).
    def protocol = settings.fetch("protocol", "http1")

    # Response body bytes of the measured window's complete responses, and
    # them in MB (10^6 bytes) per second of the window: a download's
    # figure. nil for results from engines before they were counted.
    def body_bytes = data["body_bytes"]
    def mb_per_s = data["mb_per_s"]

    # An h2c run's connection and stream ends (doc/output.md, "h2"): nil
    # for http1.
    def h2 = data["h2"]

    # An https:// run's TLS (doc/output.md, "tls"): what the handshakes
    # negotiated and cost, the share of responses that waited for one, and
    # how TLS failed; nil for http://.
    def tls = data["tls"]

    # Why TLS failed, when a connection's did; nil otherwise.
    def tls_reason
      return nil unless tls && tls["failures"].values.sum.positive?

      tls["reason"] || "no reason given"
    end

    # Why the server did not speak HTTP/2 (h2c prior knowledge), when one
    # of its connections showed it; nil otherwise.
    def not_h2c_reason
      return nil unless h2 && h2["not_h2c_connections"].to_i.positive?

      h2["reason"] || "no reason given"
    end

    # Transport errors in the measured window (every kind together).
    def error_count
      Counts.transport_errors(data)
    end

    # Responses whose status is not 2xx or 3xx.
    def bad_status_count
      Counts.bad_statuses(data)
    end

    # Failed requests: transport errors plus responses whose status is not
    # 2xx or 3xx (a server answering 500 fast is not a result either).
    def failed_count
      Counts.failed(data)
    end

    # Responses plus transport errors: every request the window started.
    def attempts
      Counts.attempts(data)
    end

    # failed_count over attempts (0.0 without any).
    def failure_rate
      total = attempts
      total.zero? ? 0.0 : failed_count.fdiv(total)
    end

    def saturated?
      cpu["saturated"]
    end

    def to_h
      data
    end

    # The counts of a result document, as functions of the document: the
    # one definition that a live LoadResult and a stored trial
    # (Trial::Http::Reading) both use. A document of any rackbench version
    # works: nothing here validates it.
    module Counts
      module_function

      def transport_errors(doc)
        (doc["errors"] || {}).values.sum
      end

      def bad_statuses(doc)
        (doc["status"] || {}).sum { |code, count| code.to_i.between?(200, 399) ? 0 : count }
      end

      def failed(doc)
        transport_errors(doc) + bad_statuses(doc)
      end

      def attempts(doc)
        doc["requests"].to_i + transport_errors(doc)
      end
    end

    private

    def validate!
      raise EngineError, "load engine result is not a JSON object" unless data.is_a?(Hash)
      unless data["format"] == FORMAT && data["format_version"] == FORMAT_VERSION
        raise EngineError, "load engine result has format #{data["format"].inspect} " \
                           "version #{data["format_version"].inspect}; expected #{FORMAT} #{FORMAT_VERSION}"
      end
      check_types(data, REQUIRED, nil)
      require_keys("latency_us", latency_us, LATENCY_KEYS)
      require_keys("errors", errors, REQUIRED_ERROR_KINDS)
      require_keys("cpu", cpu, CPU_KEYS)
      validate_open_loop!
      validate_entries!
      validate_h2!
      validate_tls!
      validate_service!
      validate_probes!
    end

    # service: optional (older engines); connections always, streams for h2c.
    def validate_service!
      return if service.nil?
      raise EngineError, "load engine result: service is not an object" unless service.is_a?(Hash)

      unless service["connections"].is_a?(Hash)
        raise EngineError, "load engine result: service.connections is not an object"
      end

      check_types(service["connections"], SERVICE, "service.connections.")
      check_types(service["streams"], SERVICE, "service.streams.") if service["streams"]
    end

    # probes: optional, null without probe entries.
    def validate_probes!
      return if probes.nil?
      raise EngineError, "load engine result: probes is not an object" unless probes.is_a?(Hash)

      %w[start end].each do |point|
        value = probes[point]
        raise EngineError, "load engine result: probes.#{point} is not an object" unless value.is_a?(Hash)

        check_types(value, PROBE_POINT, "probes.#{point}.")
      end
    end

    # tls: optional (older engines), null for http://, else its counts.
    def validate_tls!
      return if tls.nil?
      raise EngineError, "load engine result: tls is #{tls.inspect[0, 40]}, expected an object or null" unless tls.is_a?(Hash)

      check_types(tls, TLS, "tls.")
      require_keys("tls.full_handshake_us", tls["full_handshake_us"], LATENCY_KEYS)
      require_keys("tls.resumed_handshake_us", tls["resumed_handshake_us"], LATENCY_KEYS)
      require_keys("tls.failures", tls["failures"], TLS_FAILURES)
      check_types(tls["warmup"], TLS_COUNTS, "tls.warmup.")
    end

    # h2: optional (older engines), null for http1, else its counts.
    def validate_h2!
      return if h2.nil?
      raise EngineError, "load engine result: h2 is #{h2.inspect[0, 40]}, expected an object or null" unless h2.is_a?(Hash)

      check_types(h2, H2, "h2.")
    end

    # entries: optional (older engines), null for one URL, else an Array of
    # per-entry results whose counts add up to the top-level ones.
    def validate_entries!
      return if entries.nil?
      raise EngineError, "load engine result: entries is #{entries.inspect[0, 40]}, expected Array or null" unless entries.is_a?(Array)

      entries.each_with_index do |entry, i|
        raise EngineError, "load engine result: entries[#{i}] is not an object" unless entry.is_a?(Hash)

        check_types(entry, ENTRY, "entries[#{i}].")
        require_keys("entries[#{i}].latency_us", entry["latency_us"], LATENCY_KEYS)
        require_keys("entries[#{i}].errors", entry["errors"], REQUIRED_ERROR_KINDS)
      end
      sum = entries.sum { |e| e["requests"] }
      return if sum == requests

      raise EngineError, "load engine result: entries' requests add up to #{sum}, not requests #{requests}"
    end

    # late and offered_rps are the open loop's: both present or both null.
    def validate_open_loop!
      if late.nil? != offered_rps.nil?
        raise EngineError, "load engine result: late is #{late ? "present" : "null"} but offered_rps is " \
                           "#{offered_rps.inspect}; both are null in closed loop, both set in open loop"
      end
      check_types(late, LATE, "late.") if late
    end
  end
end

require_relative "tls_figures"
