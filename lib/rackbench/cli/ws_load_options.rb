# frozen_string_literal: true

module Rackbench
  module CLI
    # `rackbench load ws://...`: the WebSocket options of the load command,
    # and the WsLoadSettings a ws:// or wss:// URL runs with. The options
    # shared with HTTP (-c as the clients, -t, -d, -w, --timeout, -R for
    # echo, -H, --seed, --cpus, TLS's) are read by LoadCommand; the rest of
    # HTTP's do not apply to a WebSocket and are refused by name.
    module WsLoadOptions
      # LoadCommand's option keys a WebSocket run takes, by WsLoadSettings' name.
      SHARED = {
        connections: :clients, threads: :threads, duration_s: :duration_s, warmup_s: :warmup_s, rate: :rate,
        headers: :headers, timeout_s: :timeout_s, seed: :seed, cpus: :cpus, allow_remote: :allow_remote,
        ca_file: :ca_file, insecure: :insecure, tls_resume: :tls_resume
      }.freeze
      # The flag a user gave for an HTTP-only key, for the refusal.
      HTTP_FLAGS = {
        count: "--count", warmup_count: "--warmup-count", think_s: "--think", keepalive: "--no-keepalive",
        protocol: "--protocol", streams: "--streams", method: "--method", body: "--body",
        requests_file: "--requests", cookies: "--cookies", raw_file: "--raw"
      }.freeze

      module_function

      # Adds the WebSocket options to parser p; their values go into ws.
      def define(p, ws, command)
        p.separator ""
        p.separator "WebSocket (a ws:// or wss:// URL; -c is the number of clients, doc/websockets.md):"
        p.on("--workload W", "connect, echo (default) or broadcast") { |v| ws[:workload] = v }
        p.on("--ramp D", "the clients connect evenly over D (default 0: all at once)") do |v|
          ws[:ramp_s] = command.send(:duration, v, "--ramp")
        end
        p.on("--interval D", "broadcast: one every D (default 1s)") { |v| ws[:interval_s] = command.send(:duration, v, "--interval") }
        p.on("--broadcast-url URL", "broadcast: POST each one to the app at URL (http://)") { |v| ws[:broadcast_url] = v }
        p.on("--message-bytes N", "the body of each message sent (default 64)") do |v|
          ws[:message_bytes] = command.send(:integer, v, "--message-bytes")
        end
        p.on("--binary", "send binary messages, not text") { ws[:binary] = true }
        p.on("--fragment-bytes N", "send each message in frames of N bytes") do |v|
          ws[:fragment_bytes] = command.send(:integer, v, "--fragment-bytes")
        end
        p.on("--max-message-bytes N", "the largest message accepted (default 1048576)") do |v|
          ws[:max_message_bytes] = command.send(:integer, v, "--max-message-bytes")
        end
        p.on("--cable", "speak Action Cable (actioncable-v1-json)") { ws[:cable] = true }
        p.on("--channel NAME", "Cable: the channel subscribed to (default BenchmarkChannel)") { |v| ws[:channel] = v }
        p.on("--channel-params JSON", "Cable: its params, a JSON object") { |v| ws[:channel_params] = v }
        p.on("--echo-action A", "Cable: the channel's action that echoes (default echo)") { |v| ws[:echo_action] = v }
        p.on("--broadcast-action A", "Cable: the one that broadcasts (default broadcast)") { |v| ws[:broadcast_action] = v }
      end

      # The settings of a WebSocket run from the command's two sets of options.
      def settings(url, options, ws)
        given = options.reject { |key, value| value.respond_to?(:empty?) && value.empty? }
        http_only = given.keys & HTTP_FLAGS.keys
        raise UsageError, "#{HTTP_FLAGS[http_only.first]}: for HTTP URLs only, not a WebSocket one" unless http_only.empty?

        shared = given.slice(*SHARED.keys).transform_keys(SHARED)
        WsLoadSettings.build(url: url, **shared, **ws)
      end

      # Refuses WebSocket options given with an HTTP URL.
      def refuse_for_http(ws)
        return if ws.empty?

        raise UsageError, "--#{ws.keys.first.to_s.sub(/_s\z/, "").tr("_", "-")} applies to ws:// and wss:// URLs only"
      end
    end
  end
end
