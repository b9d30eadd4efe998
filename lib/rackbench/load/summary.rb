# frozen_string_literal: true

module Rackbench
  # The human summary of one LoadResult, shaped like wrk's: the run, the
  # throughput, the latency percentiles, what went wrong, and what the
  # engine itself cost (with a warning when it may have been the bottleneck).
  class LoadSummary
    def initialize(result)
      @result = result
    end

    def to_s
      lines = [header]
      lines << warmup_line if @result.warmup["duration_s"].positive?
      lines.concat(measured_lines)
      lines << late_line if @result.late
      lines.concat(tls_lines) if @result.tls
      lines.concat(problem_lines)
      lines.concat(entry_lines) if @result.entries
      lines << cpu_line
      lines << saturation_warning if @result.saturated?
      lines << "  Interrupted: the figures cover the part of the run before Ctrl-C." if @result.interrupted?
      lines.join("\n") << "\n"
    end

    private

    def settings = @result.settings

    def header
      mode = settings["mode"] == "open" ? "open loop at #{settings["rate"]} req/s" : "closed loop"
      keepalive = settings["keepalive"] ? "keep-alive" : "no keep-alive (client closes)"
      threads = settings["threads"] == 1 ? "1 thread" : "#{settings["threads"]} threads"
      "Load #{settings["url"]} for #{settings["duration_s"]}s: #{mode}, #{settings["connections"]} connections, " \
        "#{threads}, #{keepalive}#{protocol_text}"
    end

    # ", h2c, 10 streams per connection" for HTTP/2; nothing for HTTP/1.1.
    def protocol_text
      return "" unless LoadSettings::HTTP2.include?(@result.protocol)

      streams = settings["streams"]
      ", #{@result.protocol}, #{streams} stream#{"s" unless streams == 1} per connection"
    end

    # https://: what the handshakes negotiated and cost, and the share of
    # responses that waited for one.
    def tls_lines
      tls = @result.tls
      return [] unless tls["version"] || tls["handshakes"].positive?

      made = [tls["version"], tls["cipher"], ("ALPN #{tls["alpn"]}" if tls["alpn"])].compact.join(", ")
      full = LoadResult::TlsFigures.full_handshake_us(tls)
      resumed = LoadResult::TlsFigures.resumed_handshake_us(tls)
      costs = [("full #{Units.latency_us(full)}" if full), ("resumed #{Units.latency_us(resumed)}" if resumed)].compact
      warmup = tls["warmup"]
      ["  TLS:         #{made}",
       "  Handshakes:  #{tls["handshakes"]} in the window (#{tls["resumed"]} resumed), #{warmup["handshakes"]} in the " \
       "warmup; mean #{costs.empty? ? "-" : costs.join(", ")}; " \
       "#{Units.percent(tls["handshake_response_fraction"], digits: 2)} of the responses paid one"]
    end

    def warmup_line
      w = @result.warmup
      "  Warmup:      #{w["requests"]} requests in #{Units.seconds(w["duration_s"])}, #{Units.rate(w["rps"])} req/s " \
        "(not counted below)"
    end

    def measured_lines
      requests = "  Requests:    #{@result.requests} in #{Units.seconds(@result.duration_s)}, " \
                 "#{Units.rate(@result.rps)} req/s, #{Units.bytes(@result.bytes_per_s)}/s"
      requests += ", bodies #{format("%.1f", @result.mb_per_s)} MB/s" if @result.mb_per_s
      [requests, *offered_line, *latency_lines, "  Status:      #{status_text}"]
    end

    # Open loop: the rate asked of the server beside the rate it answered,
    # and the scheduled requests that never went out.
    def offered_line
      return [] unless @result.offered_rps

      ["  Offered:     #{Units.rate(@result.offered_rps)} req/s (#{@result.late["scheduled"]} scheduled), " \
       "#{@result.unsent} unsent"]
    end

    def latency_lines
      return ["  Latency:     no responses"] if @result.requests.zero?

      lat = @result.latency_us
      f = Units.method(:latency_us)
      ["  Latency:     p50 #{f.(lat["p50"])}  p90 #{f.(lat["p90"])}  p99 #{f.(lat["p99"])}  " \
       "p99.9 #{f.(lat["p99_9"])}  max #{f.(lat["max"])}",
       "               mean #{f.(lat["mean"])}  stdev #{f.(lat["stdev"])}  min #{f.(lat["min"])}"]
    end

    def status_text
      return "none" if @result.status.empty?

      @result.status.sort.map { |code, count| "#{code} x #{count}" }.join(", ")
    end

    def late_line
      late = @result.late
      format("  Late sends:  %d of %d scheduled requests went out >= %.0fus late (p99 %s, max %s)",
             late["requests"], late["scheduled"], late["threshold_us"],
             Units.latency_us(late["p99_us"]), Units.latency_us(late["max_us"]))
    end

    def problem_lines
      lines = []
      errors = @result.errors.select { |_, count| count.positive? }
      lines << "  Errors:      #{errors.map { |kind, count| "#{kind} #{count}" }.join(", ")}" unless errors.empty?
      bad = @result.bad_status_count
      lines << "  Non-2xx/3xx: #{bad} responses" if bad.positive?
      conn = @result.connections
      if conn["established"] < conn["requested"]
        lines << "  Connections: only #{conn["established"]} of #{conn["requested"]} requested connections " \
                 "ever connected"
      end
      if conn["close_ignored"].positive?
        lines << "  Connection: close was ignored by the server #{conn["close_ignored"]} times " \
                 "(the client closed instead)"
      end
      lines << "  Abandoned:   #{@result.data["abandoned"]} requests in flight at Ctrl-C" if @result.data["abandoned"].positive?
      if @result.unsent&.positive?
        lines << "  Unsent:      #{@result.unsent} scheduled requests never went out: no connection came free " \
                 "before the window ended (the server held them all); they are in no latency figure"
      end
      lines.concat(h2_lines)
      lines.concat(service_lines)
      lines.concat(probe_lines)
      lines << "  TLS failed:  #{@result.tls_reason}#{tls_hint}" if @result.tls_reason
      lines << "  Warning:     #{@result.warning}" if @result.warning
      lines
    end

    # What to do about a certificate that did not check out.
    def tls_hint
      return "" unless @result.tls["failures"]["verify"].to_i.positive?

      " (--cacert FILE trusts a certificate, --insecure checks none)"
    end

    # Slots the server never answered in the window: the figures above are
    # those of the slots it served.
    def service_lines
      service = @result.service || {}
      %w[connections streams].filter_map do |kind|
        counts = service[kind]
        next unless counts.is_a?(Hash) && counts["unserved"].positive?

        what = kind == "streams" ? "stream slots" : "connections"
        "  Unserved:    only #{counts["served"]} of #{counts["active"]} #{what} got a response in the window (the " \
          "longest wait #{Units.seconds(counts["max_wait_us"] / 1e6, digits: 1)}); the figures are those of the " \
          "#{what} served"
      end
    end

    # Slots whose session probe failed (doc/requests.md, "Session probes").
    def probe_lines
      lost = RequestList.lost_sessions(@result.probes)
      lost ? ["  Sessions:    #{lost}"] : []
    end

    # h2c: why streams or connections ended badly, when any did.
    def h2_lines
      h2 = @result.h2
      return [] unless h2

      lines = []
      if (reason = @result.not_h2c_reason)
        lines << "  Not HTTP/2:  the server did not speak HTTP/2 (h2c prior knowledge): #{reason}"
      elsif h2["protocol_errors"].positive?
        lines << "  HTTP/2:      #{h2["protocol_errors"]} connections failed: #{h2["reason"]}"
      end
      codes = ->(counts) { counts.map { |code, n| "#{code} #{n}" }.join(", ") }
      lines << "  Resets:      #{codes.(h2["resets"])} (RST_STREAM from the server)" unless h2["resets"].empty?
      lines << "  GOAWAY:      #{codes.(h2["goaway_codes"])}" unless h2["goaway_codes"].empty?
      lines
    end

    # A request list's entries, one row each in file order: requests
    # (redirect hops counted apart), statuses, errors, and the entry's own
    # latency (first request to last response of its redirect chain).
    def entry_lines
      rows = @result.entries.map do |e|
        name = e["name"] || "##{e["index"]}"
        name = "#{name} (first)" if e["first"]
        requests = e["hops"].positive? ? "#{e["requests"]} (#{e["hops"]} hops)" : e["requests"].to_s
        status = e["status"].sort.map { |code, n| "#{code}x#{n}" }.join(" ")
        errors = e["errors"].select { |_, n| n.positive? }.map { |kind, n| "#{kind} #{n}" }.join(" ")
        lat = e["latency_us"]
        latency = e["histogram"]["total"].zero? ? "-" : "#{Units.latency_us(lat["p50"])} / #{Units.latency_us(lat["p99"])}"
        warmup_errors = e["warmup"]["errors"].values.sum
        errors = [errors, ("warmup errors #{warmup_errors}" if warmup_errors.positive?)].compact.reject(&:empty?).join(", ")
        [name, requests, status.empty? ? "-" : status, latency, errors.empty? ? "-" : errors]
      end
      table = [["entry", "requests", "status", "p50 / p99", "errors"], *rows]
      widths = table.transpose.map { |column| column.map(&:length).max }
      ["  Entries:", *table.map { |row| "    #{row.zip(widths).map { |cell, w| cell.ljust(w) }.join("  ").rstrip}" }]
    end

    def cpu_line
      cpu = @result.cpu
      format("  Engine CPU:  %.2fus/request (user %s, system %s, %s of %d thread%s)",
             cpu["us_per_request"], Units.seconds(cpu["user_s"]), Units.seconds(cpu["system_s"]),
             Units.percent(cpu["utilization"], digits: 0), cpu["threads"], cpu["threads"] == 1 ? "" : "s")
    end

    def saturation_warning
      "  WARNING: the engine was saturated (#{Units.percent(@result.cpu["utilization"], digits: 0)} CPU): it may have " \
        "been the bottleneck, not the server. Add --threads or give it more cores."
    end
  end
end
