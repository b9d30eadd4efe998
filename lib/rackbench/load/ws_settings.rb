# frozen_string_literal: true

module Rackbench
  # What one WebSocket run of the load engine should do (a ws:// or wss://
  # URL; doc/websockets.md). Immutable; #validate! checks every value and
  # names the first bad one. LoadEngine runs it as it runs a LoadSettings.
  #
  # Options (all but url optional):
  # :url :: ws:// or wss://127.0.0.1:PORT/path (loopback unless allow_remote)
  # :workload :: "connect" (clients connect and hold), "echo" (each client
  #   sends a message and waits for it back) or "broadcast" (a broadcaster
  #   sends one every interval to all) (default: "echo")
  # :clients :: WebSocket clients, all on the engine's threads (default: 10)
  # :threads :: engine threads (default: 1)
  # :ramp_s :: the clients connect evenly over this long; 0 all at once, an
  #   avalanche (default: 0)
  # :duration_s :: the measured window after every client connected (default: 10)
  # :warmup_s :: warmup before it (default: 0)
  # :timeout_s :: a client not ready this long after its connect began
  #   failed; an echo not back this long after its send timed out; the
  #   last broadcast is waited for this long (default: 2)
  # :rate :: echo only: messages/s overall, open loop (default: nil: closed loop)
  # :interval_s :: broadcast: one broadcast every (default: 1)
  # :broadcast_url :: broadcast: an http:// endpoint of the app that each
  #   broadcast is POSTed to, instead of a WebSocket client of its own (default: nil)
  # :message_bytes :: the body of each message sent (default: 64)
  # :binary :: send binary messages, not text (default: false)
  # :fragment_bytes :: send each message in frames of this many bytes (default: nil: one frame)
  # :max_message_bytes :: the largest message accepted from the server (default: 1048576)
  # :cable :: speak Action Cable (actioncable-v1-json) (default: false)
  # :channel :: Cable: the channel every client subscribes to (default: "BenchmarkChannel")
  # :channel_params :: Cable: its params, a JSON object's text (default: nil)
  # :echo_action :: Cable: the channel's action that echoes (default: "echo")
  # :broadcast_action :: Cable: the one that broadcasts (default: "broadcast")
  # :headers :: Array of "Name: value" added to the Upgrade (default: [])
  # :seed :: seed of the masks and keys (default: 1)
  # :cpus :: CPU list to pin the engine to (default: nil)
  # :allow_remote :: permit a non-loopback target (default: false)
  # :ca_file, :insecure, :tls_resume :: wss:// as for https:// (LoadSettings)
  WsLoadSettings = Struct.new(
    :url, :workload, :clients, :threads, :ramp_s, :duration_s, :warmup_s, :timeout_s, :rate, :interval_s,
    :broadcast_url, :message_bytes, :binary, :fragment_bytes, :max_message_bytes, :cable, :channel,
    :channel_params, :echo_action, :broadcast_action, :headers, :seed, :cpus, :allow_remote, :ca_file,
    :insecure, :tls_resume,
    keyword_init: true
  )

  # Reopened so that its constants live in the class, not in Rackbench.
  class WsLoadSettings
    WORKLOADS = %w[connect echo broadcast].freeze
    DEFAULTS = {
      workload: "echo", clients: 10, threads: 1, ramp_s: 0.0, duration_s: 10.0, warmup_s: 0.0, timeout_s: 2.0,
      rate: nil, interval_s: 1.0, broadcast_url: nil, message_bytes: 64, binary: false, fragment_bytes: nil,
      max_message_bytes: 1_048_576, cable: false, channel: "BenchmarkChannel", channel_params: nil,
      echo_action: "echo", broadcast_action: "broadcast", headers: [].freeze, seed: 1, cpus: nil,
      allow_remote: false, ca_file: nil, insecure: false, tls_resume: true
    }.freeze
    MAX_MESSAGE_BYTES = 16 * 1024 * 1024
    NAME = /\A[^"\\\x00-\x1f\x7f]+\z/

    def self.build(**options)
      unknown = options.keys - members
      raise UsageError, "unknown WebSocket setting #{unknown.first}" unless unknown.empty?

      new(**DEFAULTS.merge(options.compact)).validate!
    end

    # Whether url is a WebSocket one (this class's, not LoadSettings').
    def self.url?(url)
      url.to_s.match?(%r{\Awss?://})
    end

    def validate!
      check(self.class.url?(url), "url", url, "a ws:// or wss:// URL")
      check(WORKLOADS.include?(workload), "workload", workload, WORKLOADS.join(", "))
      check(positive_int?(clients), "clients", clients, "an integer >= 1")
      check(positive_int?(threads) && threads <= 1024 && threads <= clients, "threads", threads,
            "an integer 1-1024, at most clients (#{clients})")
      check(seconds?(ramp_s), "ramp", ramp_s, "a duration >= 0")
      check(seconds?(duration_s) && duration_s.positive?, "duration", duration_s, "a duration > 0")
      check(seconds?(warmup_s), "warmup", warmup_s, "a duration >= 0")
      check(seconds?(timeout_s) && timeout_s >= 0.001, "timeout", timeout_s, "a duration >= 1ms")
      check(seconds?(interval_s) && interval_s >= 0.001, "interval", interval_s, "a duration >= 1ms")
      check(bytes?(message_bytes), "message_bytes", message_bytes, "1 to #{MAX_MESSAGE_BYTES}")
      check(bytes?(max_message_bytes) && max_message_bytes >= message_bytes, "max_message_bytes",
            max_message_bytes, "1 to #{MAX_MESSAGE_BYTES}, at least message_bytes")
      check(fragment_bytes.nil? || bytes?(fragment_bytes), "fragment_bytes", fragment_bytes, "1 to #{MAX_MESSAGE_BYTES}")
      check(headers.is_a?(Array) && headers.all? { |h| h.is_a?(String) && h.match?(/\A[^:\s]+:/) },
            "header", headers, "'Name: value'")
      check(seed.is_a?(Integer) && seed >= 0, "seed", seed, "an integer >= 0")
      check([true, false].include?(binary) && [true, false].include?(cable), "binary/cable", [binary, cable], "true or false")
      validate_workload!
      validate_cable!
      validate_tls!
      self
    end

    # The engine's arguments but its own path and the URL.
    def engine_arguments
      args = ["-c", clients.to_s, "-t", threads.to_s, "-d", Duration.to_engine(duration_s),
              "-w", Duration.to_engine(warmup_s), "--timeout", Duration.to_engine(timeout_s), "--seed", seed.to_s,
              "--workload", workload, "--message-bytes", message_bytes.to_s,
              "--max-message-bytes", max_message_bytes.to_s]
      args.push("--ramp", Duration.to_engine(ramp_s)) if ramp_s.positive?
      args.push("--rate", rate == rate.to_i ? rate.to_i.to_s : rate.to_s) if rate
      args.push("--interval", Duration.to_engine(interval_s)) if workload == "broadcast"
      args.push("--broadcast-url", broadcast_url) if broadcast_url
      args << "--binary" if binary
      args.push("--fragment-bytes", fragment_bytes.to_s) if fragment_bytes
      args.concat(cable_arguments) if cable
      headers.each { |h| args.push("-H", h) }
      args.push("--cpus", cpu_list) if cpus
      args << "--allow-remote" if allow_remote
      args.push("--cacert", ca_file) if ca_file
      args << "--insecure" if insecure
      args << "--no-tls-resume" unless tls_resume
      args
    end

    # How long the engine's run lasts at most: the setup (the ramp, and a
    # timeout for the last client), warmup, window, and the drain.
    def max_run_s
      ramp_s + timeout_s + warmup_s + duration_s + timeout_s
    end

    # What LoadEngine and RemoteEngine ask of any settings.
    def count? = false
    def requests_file = nil
    def websocket? = true
    def tls? = url.start_with?("wss://")

    def cpu_list
      return nil if cpus.nil?

      cpus.is_a?(Array) ? cpus.join(",") : cpus.to_s
    end

    private

    def cable_arguments
      args = ["--cable", "--channel", channel, "--echo-action", echo_action, "--broadcast-action", broadcast_action]
      args.push("--channel-params", channel_params) if channel_params
      args
    end

    def validate_workload!
      raise UsageError, "rate paces the echo workload's messages: it does not apply to #{workload}" if rate && workload != "echo"

      check(rate.nil? || (rate.is_a?(Numeric) && rate.positive?), "rate", rate, "messages/s > 0")
      return unless broadcast_url

      raise UsageError, "broadcast_url needs workload broadcast" unless workload == "broadcast"

      check(broadcast_url.is_a?(String) && broadcast_url.start_with?("http://"), "broadcast_url", broadcast_url,
            "an http:// URL of the app")
    end

    def validate_cable!
      if cable
        check(binary == false, "binary", binary, "false with cable (Action Cable speaks JSON text)")
        [[:channel, channel], [:echo_action, echo_action], [:broadcast_action, broadcast_action]].each do |name, value|
          check(value.is_a?(String) && value.match?(NAME), name.to_s, value, "a name without quotes")
        end
        check(channel_params.nil? || channel_params.to_s.strip.match?(/\A\{.*\}\z/m), "channel_params", channel_params,
              "a JSON object, e.g. '{\"room\":\"1\"}'")
        return
      end
      changed = %i[channel channel_params echo_action broadcast_action].reject { |k| self[k] == DEFAULTS[k] }
      raise UsageError, "#{changed.first} needs cable (Action Cable)" unless changed.empty?
    end

    def validate_tls!
      check([true, false].include?(insecure) && [true, false].include?(tls_resume), "insecure/tls_resume",
            [insecure, tls_resume], "true or false")
      raise UsageError, "ca_file and insecure contradict each other: trust a certificate, or check none" if ca_file && insecure
      return if tls?

      raise UsageError, "ca_file, insecure and tls_resume apply to wss:// URLs only" if ca_file || insecure || !tls_resume
    end

    def positive_int?(value) = value.is_a?(Integer) && value >= 1
    def bytes?(value) = value.is_a?(Integer) && value.between?(1, MAX_MESSAGE_BYTES)
    def seconds?(value) = value.is_a?(Numeric) && value >= 0 && value.finite?

    def check(ok, name, value, expected)
      raise UsageError, "invalid #{name} #{value.inspect} (expected #{expected})" unless ok
    end
  end
end
