# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "ws_load_options"

module Rackbench
  module CLI
    # `rackbench load URL`: one run of the load engine, summarised for a
    # human or printed as the engine's JSON document (--json). A ws:// or
    # wss:// URL runs WebSocket clients (WsLoadOptions).
    class LoadCommand < Command
      def run(argv)
        options = { headers: [], cookie_presets: [] }
        ws = {}
        json = false
        urls = parse(argv, options, ws) { json = true }
        return CLI::EXIT_OK unless urls
        raise UsageError, "load needs exactly one URL (see rackbench load --help)" unless urls.size == 1

        if options[:count] && options[:duration_s]
          raise UsageError, "--count and --duration both end the measured window: give one"
        end
        result = LoadEngine.new.run(settings_for(urls.first, options, ws))
        print_result(result, json)
        CLI::EXIT_OK
      rescue Interrupted => e
        print_result(e.partial_result, json) if e.partial_result
        @err.puts "rackbench: interrupted"
        CLI::EXIT_INTERRUPTED
      end

      private

      def settings_for(url, options, ws)
        return WsLoadOptions.settings(url, options, ws) if WsLoadSettings.url?(url)

        WsLoadOptions.refuse_for_http(ws)
        LoadSettings.build(url: url, **options)
      end

      def print_result(result, json)
        if json
          @out.puts JSON.generate(result.to_h)
        elsif result.is_a?(WsLoadResult)
          @out.print WsLoadSummary.new(result)
        else
          @out.print LoadSummary.new(result)
        end
      end

      def duration(text, name)
        Duration.parse_s(text)
      rescue ArgumentError
        raise UsageError, "invalid #{name} #{text.inspect} (expected e.g. 10s, 500ms, 2m)"
      end

      def integer(text, name)
        Integer(text, 10)
      rescue ArgumentError
        raise UsageError, "invalid #{name} #{text.inspect} (expected an integer)"
      end

      def parse(argv, o, ws, &on_json)
        parse_options(argv, "Usage: rackbench load [options] URL") do |p|
          p.separator "Drives HTTP/1.1 or HTTP/2 load at URL, http:// or https://, or WebSocket clients at a ws:// or"
          p.separator "wss:// URL (loopback only unless --allow-remote)."
          p.on("-c", "--connections N", "concurrent connections (default 10)") { |v| o[:connections] = integer(v, "--connections") }
          p.on("-t", "--threads N", "engine threads (default 1)") { |v| o[:threads] = integer(v, "--threads") }
          p.on("-d", "--duration D", "measured window, e.g. 10s, 500ms (default 10s)") { |v| o[:duration_s] = duration(v, "--duration") }
          p.on("-n", "--count N", "measured window of exactly N requests instead (closed loop)") do |v|
            o[:count] = integer(v, "--count")
          end
          p.on("-w", "--warmup D", "warmup before the window (default 0)") { |v| o[:warmup_s] = duration(v, "--warmup") }
          p.on("--warmup-count N", "with --count: a warmup of N requests instead") do |v|
            o[:warmup_count] = integer(v, "--warmup-count")
          end
          p.on("-R", "--rate R", Float, "open loop: requests/s overall (default: closed loop)") { |v| o[:rate] = v }
          p.on("--think D", "closed loop: each connection waits D after a response (default 0)") do |v|
            o[:think_s] = duration(v, "--think")
          end
          p.on("-k", "--no-keepalive", "close on the client side after every response") { o[:keepalive] = false }
          p.on("--protocol P", "http1 (default); h2c: HTTP/2 over cleartext, prior knowledge; " \
                               "h2: HTTP/2 over TLS by ALPN (https://)") { |v| o[:protocol] = v }
          p.on("--streams N", "HTTP/2: concurrent streams per connection (default 1)") { |v| o[:streams] = integer(v, "--streams") }
          p.on("--cacert FILE", "https: trust the certificates in FILE (PEM) instead of the system's") { |v| o[:ca_file] = v }
          p.on("--insecure", "https: do not check the server's certificate (self-signed, local)") { o[:insecure] = true }
          p.on("--no-tls-resume", "https: a full handshake on every new connection (no session resumption)") do
            o[:tls_resume] = false
          end
          p.on("-H", "--header 'K: V'", "request header (repeatable)") { |v| o[:headers] << v }
          p.on("-m", "--method M", "request method (default GET)") { |v| o[:method] = v }
          p.on("--body TEXT", "request body") { |v| o[:body] = v }
          p.on("--timeout D", "per-request timeout (default 2s)") { |v| o[:timeout_s] = duration(v, "--timeout") }
          p.on("--requests FILE", "request list (doc/requests.md)") { |v| o[:requests_file] = v }
          p.on("--cookies", "keep a cookie jar per connection") { o[:cookies] = true }
          p.on("--cookie NAME=VALUE", "a cookie in every connection's jar from the start (repeatable)") do |v|
            o[:cookie_presets] << v
            o[:cookies] = true
          end
          p.on("--seed N", "seed of the request mix (default 1)") { |v| o[:seed] = integer(v, "--seed") }
          p.on("--raw FILE", "write one CSV record per request") { |v| o[:raw_file] = v }
          p.on("--cpus LIST", "pin the engine's threads, e.g. 1 or 0-3") { |v| o[:cpus] = v }
          p.on("--allow-remote", "allow a non-loopback target") { o[:allow_remote] = true }
          p.on("--json", "print the engine's JSON document (doc/output.md)", &on_json)
          WsLoadOptions.define(p, ws, self)
        end
      end
    end
  end
end
