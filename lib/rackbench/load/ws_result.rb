# frozen_string_literal: true

require_relative "contract"

module Rackbench
  # The load engine's result document for a WebSocket run
  # ("rackbench-engine-ws", doc/output.md), checked against the contract on
  # construction: a malformed document fails loudly here rather than as a
  # nil deep inside a report. The accessors are what a report of a
  # WebSocket trial reads: connections, their failures by reason, round
  # trips, delivery, and the window's edges for sampling the server.
  class WsLoadResult
    include LoadContract

    FORMAT = "rackbench-engine-ws"
    FORMAT_VERSION = 1
    BOOL = [true.class, false.class].freeze
    # key => the classes its value may have
    REQUIRED = {
      "format" => [String], "format_version" => [Integer], "engine_version" => [String], "interrupted" => BOOL,
      "workload" => [String], "settings" => [Hash], "nofile" => [Hash], "edges" => [Hash], "duration_s" => [Numeric],
      "warmup" => [Hash], "connect" => [Hash], "lost" => [Hash], "close_codes" => [Hash],
      "echo" => [Hash, NilClass], "broadcast" => [Hash, NilClass], "frames" => [Hash], "cable" => [Hash, NilClass],
      "tls" => [Hash, NilClass], "cpu" => [Hash], "memory" => [Hash]
    }.freeze
    # HTTP's latency keys and the p95 a broadcast target is set on.
    LATENCY_KEYS = (LoadResult::LATENCY_KEYS + ["p95"]).freeze
    # Why a client ended (connect.failures' and lost.by_kind's keys).
    END_KINDS = %w[refused connect timeout tls status handshake rejected malformed server_close dropped
                   disconnect].freeze
    CONNECT = {
      "requested" => [Integer], "connected" => [Integer], "failed" => [Integer], "unfinished" => [Integer],
      "failures" => [Hash], "reasons" => [Hash], "time_to_all_s" => [Numeric, NilClass],
      "last_connected_s" => [Numeric, NilClass], "duration_s" => [Numeric], "latency_us" => [Hash],
      "histogram" => [Hash], "timeline" => [Array], "cpu_s" => [Numeric], "cpu_us_per_connection" => [Numeric]
    }.freeze
    EDGES = %w[setup_start setup_end measure_start measure_end].flat_map { |e| ["#{e}_s", "#{e}_unix"] }.freeze
    ECHO = {
      "sent" => [Integer], "messages" => [Integer], "messages_per_s" => [Numeric], "timeouts" => [Integer],
      "lost" => [Integer], "stale" => [Integer], "foreign" => [Integer], "latency_us" => [Hash], "histogram" => [Hash],
      "timeline" => [Array], "late" => [Hash, NilClass], "warmup" => [Hash]
    }.freeze
    BROADCAST = {
      "broadcasts" => [Integer], "scheduled" => [Integer], "unsent" => [Integer], "failed" => [Integer],
      "broadcaster_lost" => [Integer], "receivers" => [Integer], "expected" => [Integer], "delivered" => [Integer],
      "missing" => [Integer], "duplicates" => [Integer], "foreign" => [Integer],
      "delivery_ratio" => [Numeric, NilClass], "complete" => [Integer], "incomplete" => [Integer],
      "rtt_us" => [Hash], "rtt_histogram" => [Hash], "delivery_us" => [Hash], "delivery_histogram" => [Hash],
      "timeline" => [Array], "late_sends" => [Hash], "per_broadcast" => [Array], "http" => [Hash, NilClass],
      "warmup" => [Hash]
    }.freeze
    CPU = {
      "user_s" => [Numeric], "system_s" => [Numeric], "wall_s" => [Numeric], "utilization" => [Numeric],
      "us_per_message" => [Numeric, NilClass], "threads" => [Integer], "saturated" => BOOL, "pinned" => BOOL
    }.freeze

    attr_reader :data, :warning

    # data: the parsed JSON Hash. warning: a line the engine wrote on stderr.
    def initialize(data, warning: nil)
      @data = data
      @warning = warning
      validate!
    end

    def to_h = data
    def settings = data["settings"]
    def workload = data["workload"]
    def interrupted? = data["interrupted"]
    def duration_s = data["duration_s"]
    def cpu = data["cpu"]
    def memory = data["memory"]
    def tls = data["tls"]
    def cable = data["cable"]
    def frames = data["frames"]

    # The run's moments (setup_start, setup_end, measure_start,
    # measure_end), each as seconds since the engine started ("_s") and as
    # a Unix time ("_unix"); nil for one the run never reached.
    def edges = data["edges"]

    # The setup: requested, connected, failed (by reason: failures,
    # reasons), time_to_all_s (nil unless every client connected), the
    # connect latency, the per-second timeline.
    def connect = data["connect"]
    def connected = connect["connected"]
    def requested = connect["requested"]
    def time_to_all_connected_s = connect["time_to_all_s"]

    # The failures to connect with a count, {"refused" => 3, ...}.
    def connect_failures = connect["failures"].select { |_, n| n.positive? }

    # Clients that were ready and ended before the run's end, by kind.
    def lost = data["lost"]
    def lost_count = lost["total"]

    # The echo workload's round trips (nil for another workload).
    def echo = data["echo"]

    # The broadcast workload's figures (nil for another workload).
    def broadcast = data["broadcast"]

    # Broadcast: receipts over window broadcasts x receivers (nil without
    # either).
    def delivery_ratio = broadcast && broadcast["delivery_ratio"]

    # The round trips of the workload: echo's, or a broadcast's send to its
    # last client's receipt; nil for connect.
    def rtt_us
      return echo["latency_us"] if echo

      broadcast && broadcast["rtt_us"]
    end

    # Messages of the window: echo round trips, or broadcast receipts.
    def messages
      return echo["messages"] if echo

      broadcast ? broadcast["delivered"] : 0
    end

    # Why a connection failed or was lost, one line per reason with a count.
    def failure_lines
      [["connect", connect["failures"], connect["reasons"]], ["lost", lost["by_kind"], lost["reasons"]]]
        .flat_map do |what, counts, reasons|
          counts.select { |_, n| n.positive? }.map do |kind, n|
            "#{what} #{kind} x #{n}#{": #{reasons[kind]}" if reasons[kind]}"
          end
        end
    end

    private

    def validate!
      raise EngineError, "load engine result is not a JSON object" unless data.is_a?(Hash)
      unless data["format"] == FORMAT && data["format_version"] == FORMAT_VERSION
        raise EngineError, "load engine result has format #{data["format"].inspect} " \
                           "version #{data["format_version"].inspect}; expected #{FORMAT} #{FORMAT_VERSION}"
      end
      check_types(data, REQUIRED, "")
      check(WsLoadSettings::WORKLOADS.include?(workload), "workload is #{workload.inspect}")
      check_types(connect, CONNECT, "connect.")
      require_keys("connect.failures", connect["failures"], END_KINDS)
      require_keys("connect.latency_us", connect["latency_us"], LATENCY_KEYS)
      require_keys("lost.by_kind", lost["by_kind"] || {}, END_KINDS)
      require_keys("edges", edges, EDGES)
      check_types(cpu, CPU, "cpu.")
      validate_workload!
    end

    # The workload's object is there, the others are null.
    def validate_workload!
      check(echo.nil? == (workload != "echo"), "echo is #{echo ? "present" : "null"} for workload #{workload}")
      check(broadcast.nil? == (workload != "broadcast"),
            "broadcast is #{broadcast ? "present" : "null"} for workload #{workload}")
      if echo
        check_types(echo, ECHO, "echo.")
        require_keys("echo.latency_us", echo["latency_us"], LATENCY_KEYS)
      end
      return unless broadcast

      check_types(broadcast, BROADCAST, "broadcast.")
      require_keys("broadcast.rtt_us", broadcast["rtt_us"], LATENCY_KEYS)
      expected = broadcast["broadcasts"] * broadcast["receivers"]
      check(broadcast["expected"] == expected,
            "broadcast.expected #{broadcast["expected"]} is not broadcasts x receivers (#{expected})")
      check(broadcast["delivered"] + broadcast["missing"] == expected,
            "broadcast.delivered + missing is not expected #{expected}")
    end

    def check(ok, message)
      raise EngineError, "load engine result: #{message}" unless ok
    end
  end
end
