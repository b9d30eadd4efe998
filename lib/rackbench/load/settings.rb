# frozen_string_literal: true

module Rackbench
  # What one run of the load engine should do. Immutable; #validate! checks
  # every value and names the first bad one, so the CLI and the experiment
  # runner report the same errors.
  #
  # Options (all but url optional):
  # :url :: target, http:// or https://127.0.0.1:PORT/path (loopback unless allow_remote)
  # :connections :: concurrent connections (default: 10)
  # :threads :: engine threads (default: 1)
  # :duration_s :: measured window in seconds (default: 10)
  # :count :: a window of exactly this many requests instead, closed loop:
  #   it opens once the warmup's requests are done and ends when the N have
  #   completed; duration_s is then not passed (default: nil: timed)
  # :warmup_s :: warmup before the window (default: 0)
  # :rate :: requests/s for open loop, nil for closed loop (default: nil)
  # :warmup_count :: with count: a warmup of this many requests instead of
  #   warmup_s (default: nil: timed)
  # :think_s :: closed loop: each connection waits this long after a response
  #   before its next request (default: 0)
  # :keepalive :: false closes on the client side after every response (default: true)
  # :headers :: Array of "Name: value" (default: [])
  # :method :: request method (default: "GET")
  # :body :: request body (default: nil)
  # :timeout_s :: per-request timeout (default: 2)
  # :requests_file :: request list file (default: nil)
  # :cookies :: per-connection cookie jar (default: false)
  # :cookie_presets :: Array of "name=value" put in every connection's jar
  #   from the start; the engine turns the jar on for them (default: [])
  # :seed :: seed of the request mix (default: 1)
  # :raw_file :: CSV of every request (default: nil)
  # :cpus :: CPU list to pin the engine to, e.g. "1" or [1] (default: nil)
  # :allow_remote :: permit a non-loopback target (default: false)
  # :protocol :: "http1"; "h2c" for HTTP/2 over cleartext with prior
  #   knowledge (an http:// URL); "h2" for HTTP/2 over TLS chosen by ALPN
  #   (an https:// URL) (default: "http1")
  # :streams :: HTTP/2: concurrent streams per connection; 1 for http1 (default: 1)
  # :ca_file :: https: trust the certificates in this PEM file instead of
  #   the system's, e.g. rackbench's own self-signed one (default: nil)
  # :insecure :: https: do not check the server's certificate (default: false)
  # :tls_resume :: https: a reconnecting connection resumes its TLS session;
  #   false makes every new connection a full handshake (default: true)
  # :quiet_pids_file :: with count: a file of the server's pids, one a line;
  #   each request of the warmup and the window waits until every thread of
  #   those processes sleeps, and the warmup pauses think_s too (an
  #   instructions trial's gate: Instructions::Window, the engine's
  #   quiet.h) (default: nil)
  LoadSettings = Struct.new(
    :url, :connections, :threads, :duration_s, :warmup_s, :rate, :keepalive, :headers, :method,
    :body, :timeout_s, :requests_file, :cookies, :cookie_presets, :seed, :raw_file, :cpus, :allow_remote,
    :protocol, :streams, :ca_file, :insecure, :tls_resume, :count, :think_s, :warmup_count,
    :quiet_pids_file, keyword_init: true
  )

  # Reopened so that its constants live in the class, not in Rackbench.
  class LoadSettings
    DEFAULTS = {
      connections: 10, threads: 1, duration_s: 10.0, warmup_s: 0.0, rate: nil, keepalive: true,
      headers: [].freeze, method: "GET", body: nil, timeout_s: 2.0, requests_file: nil,
      cookies: false, cookie_presets: [].freeze, seed: 1, raw_file: nil, cpus: nil, allow_remote: false,
      protocol: "http1", streams: 1, ca_file: nil, insecure: false, tls_resume: true, count: nil, think_s: 0.0,
      warmup_count: nil, quiet_pids_file: nil
    }.freeze
    # The engine's --protocol values.
    PROTOCOLS = %w[http1 h2c h2].freeze
    # The HTTP/2 ones: streams share a connection.
    HTTP2 = %w[h2c h2].freeze
    # A cookie-pair as the engine's --cookie takes it (RFC 6265, leniently).
    COOKIE_PAIR = /\A[^= ;,"\x00-\x1f\x7f]+=[^;\x00-\x1f\x7f]*\z/

    def self.build(**options)
      unknown = options.keys - members
      raise UsageError, "unknown load setting #{unknown.first}" unless unknown.empty?

      new(**DEFAULTS.merge(options.compact)).validate!
    end

    def validate!
      check(url.is_a?(String) && url.match?(%r{\Ahttps?://}), "url", url, "an http:// or https:// URL")
      check(positive_int?(connections), "connections", connections, "an integer >= 1")
      check(positive_int?(threads) && threads <= 1024, "threads", threads, "an integer 1-1024")
      check(threads <= connections, "threads", threads, "at most connections (#{connections})")
      check(seconds?(duration_s) && duration_s.positive?, "duration", duration_s, "a duration > 0")
      check(seconds?(warmup_s), "warmup", warmup_s, "a duration >= 0")
      check(seconds?(timeout_s) && timeout_s >= 0.001, "timeout", timeout_s, "a duration >= 1ms")
      check(rate.nil? || (rate.is_a?(Numeric) && rate.positive?), "rate", rate, "requests/s > 0")
      check([true, false].include?(keepalive), "keepalive", keepalive, "true or false")
      check(headers.is_a?(Array) && headers.all? { |h| h.is_a?(String) && h.match?(/\A[^:\s]+:/) },
            "header", headers, "'Name: value'")
      check(method.is_a?(String) && method.match?(/\A[A-Z]+\z/), "method", method, "e.g. GET, POST")
      check(cookie_presets.is_a?(Array) && cookie_presets.all? { |c| c.is_a?(String) && c.match?(COOKIE_PAIR) && c.bytesize <= 4096 },
            "cookie", cookie_presets, "'name=value'")
      check(seed.is_a?(Integer) && seed >= 0, "seed", seed, "an integer >= 0")
      check(cpus.nil? || cpu_list.match?(/\A\d+(-\d+)?(,\d+(-\d+)?)*\z/), "cpus", cpus, "e.g. 1, 0-3, 1,3")
      validate_protocol!
      validate_tls!
      validate_count!
      validate_think!
      if requests_file && (body || method != "GET")
        raise UsageError, "--requests cannot be combined with --method or --body (put them in the file)"
      end
      self
    end

    # The CPU list in the engine's spelling ("1,3"), or nil.
    def cpu_list
      return nil if cpus.nil?

      cpus.is_a?(Array) ? cpus.join(",") : cpus.to_s
    end

    # How long the engine's run lasts at most: warmup, window, and the drain
    # of requests still in flight (bounded by the timeout). A fixed count's
    # window has no duration: at worst every request of it waits the whole
    # timeout, its connections taking turns.
    def max_run_s
      window_s = count ? (count.fdiv(connections).ceil + 1) * (timeout_s + think_s) : duration_s
      # A gated warmup (quiet_pids_file) pauses as its window does.
      warm_pause_s = quiet_pids_file ? think_s : 0.0
      warm_s = warmup_count ? (warmup_count.fdiv(connections).ceil + 1) * (timeout_s + warm_pause_s) : warmup_s
      warm_s + window_s + timeout_s
    end

    # Whether the window is a fixed count of requests.
    def count?
      !count.nil?
    end

    # Not a WebSocket run (WsLoadSettings is).
    def websocket?
      false
    end

    # Whether the run speaks HTTP/2 (h2c, or h2 over TLS).
    def h2c?
      HTTP2.include?(protocol)
    end

    # Whether the URL is https:// (the engine speaks TLS).
    def tls?
      url.start_with?("https://")
    end

    private

    # HTTP/1.1 carries one request at a time per connection; HTTP/2 shares
    # the connection between its streams, so the client never closes it
    # after a response, and the engine has no cookie jar for it yet. h2c
    # is the cleartext one, h2 the one over TLS.
    def validate_protocol!
      check(PROTOCOLS.include?(protocol), "protocol", protocol, "http1, h2c or h2")
      check(positive_int?(streams) && streams <= 10_000, "streams", streams, "an integer 1-10000")
      raise UsageError, "streams #{streams} needs protocol h2c or h2 (HTTP/1.1 carries one request at a time)" if !h2c? && streams != 1
      if protocol == "h2c" && tls?
        raise UsageError, "protocol h2c is HTTP/2 over cleartext: use protocol h2 for an https:// URL"
      end
      raise UsageError, "protocol h2 is HTTP/2 over TLS: it needs an https:// URL (h2c is the cleartext one)" if protocol == "h2" && !tls?
      return unless h2c?

      raise UsageError, "keepalive false cannot be combined with protocol #{protocol} (streams share the connection)" unless keepalive
      raise UsageError, "cookies are not supported with protocol #{protocol} yet" if cookies || !cookie_presets.empty?
    end

    def validate_tls!
      check(ca_file.nil? || (ca_file.is_a?(String) && !ca_file.empty?), "ca_file", ca_file, "a PEM file's path")
      check([true, false].include?(insecure), "insecure", insecure, "true or false")
      check([true, false].include?(tls_resume), "tls_resume", tls_resume, "true or false")
      if ca_file && insecure
        raise UsageError, "ca_file and insecure contradict each other: trust a certificate, or check none"
      end
      return if tls?
      raise UsageError, "ca_file, insecure and tls_resume apply to https:// URLs only" if ca_file || insecure || !tls_resume
    end

    # A think time is a closed-loop client's pause, over HTTP/1.1.
    def validate_think!
      check(seconds?(think_s), "think", think_s, "a duration >= 0")
      return unless think_s.positive?

      raise UsageError, "think is a closed-loop client's pause: it cannot be combined with rate" if rate
      raise UsageError, "think is not supported with protocol h2c or h2 yet" if h2c?
    end

    # A fixed count is a closed-loop window of HTTP/1.1 requests.
    def validate_count!
      raise UsageError, "warmup_count needs count (a window of a fixed number of requests)" if count.nil? && warmup_count
      raise UsageError, "quiet_pids_file needs count (it gates a fixed-count window's requests)" if count.nil? && quiet_pids_file
      raise UsageError, "quiet_pids_file needs a single engine thread" if quiet_pids_file && threads != 1
      return if count.nil?

      check(positive_int?(count) && count <= 1_000_000_000_000, "count", count, "an integer >= 1")
      check(warmup_count.nil? || (warmup_count.is_a?(Integer) && warmup_count >= 0), "warmup_count", warmup_count,
            "an integer >= 0")
      raise UsageError, "count is a closed-loop window: it cannot be combined with rate" if rate
      raise UsageError, "count is not supported with protocol h2c or h2 yet" if h2c?
    end

    def positive_int?(value)
      value.is_a?(Integer) && value >= 1
    end

    def seconds?(value)
      value.is_a?(Numeric) && value >= 0 && value.finite?
    end

    def check(ok, name, value, expected)
      raise UsageError, "invalid #{name} #{value.inspect} (expected #{expected})" unless ok
    end
  end
end
