# frozen_string_literal: true

module Rackbench
  # The human summary of one WsLoadResult (`rackbench load ws://...`): the
  # run, how the clients connected and why any failed, the workload's
  # figures (echo round trips; a broadcast's delivery and its round trip
  # to the last client), connections lost, and what the engine cost.
  class WsLoadSummary
    def initialize(result)
      @result = result
    end

    def to_s
      lines = [header, *connect_lines]
      lines.concat(echo_lines) if @result.echo
      lines.concat(broadcast_lines) if @result.broadcast
      lines << hold_line if @result.workload == "connect"
      lines.concat(problem_lines)
      lines << cpu_line
      lines << "  Interrupted: the figures cover the part of the run before Ctrl-C." if @result.interrupted?
      lines.join("\n") << "\n"
    end

    private

    def settings = @result.settings
    def us(value) = Units.latency_us(value)

    def header
      cable = settings["cable"] ? " (Action Cable #{settings["channel"]})" : ""
      threads = settings["threads"] == 1 ? "1 thread" : "#{settings["threads"]} threads"
      "WebSocket #{settings["url"]} for #{settings["duration_s"]}s: #{@result.workload}, " \
        "#{settings["clients"]} clients#{cable}, #{threads}"
    end

    def percentiles(lat)
      "p50 #{us(lat["p50"])}  p90 #{us(lat["p90"])}  p99 #{us(lat["p99"])}  max #{us(lat["max"])}"
    end

    def connect_lines
      c = @result.connect
      how = settings["ramp_s"].positive? ? "over a #{settings["ramp_s"]}s ramp" : "all at once"
      took = c["time_to_all_s"] ? "all in #{Units.seconds(c["time_to_all_s"])}" : "not all"
      line = "  Connect:     #{c["connected"]} of #{c["requested"]} #{how}, #{took}"
      line += "; #{percentiles(c["latency_us"])}" if c["connected"].positive?
      lines = [line]
      failed = @result.connect_failures
      unless failed.empty?
        lines << "  Failed:      #{failed.map { |kind, n| "#{kind} #{n}" }.join(", ")}"
        failed.each_key { |kind| lines << "               #{kind}: #{c["reasons"][kind]}" if c["reasons"][kind] }
      end
      lines
    end

    def echo_lines
      e = @result.echo
      lines = ["  Echo:        #{e["messages"]} round trips in #{Units.seconds(@result.duration_s)}, " \
               "#{Units.rate(e["messages_per_s"])} msg/s; timeouts #{e["timeouts"]}, lost #{e["lost"]}"]
      lines << "  Round trip:  #{percentiles(e["latency_us"])}" if e["messages"].positive?
      lines
    end

    def broadcast_lines
      b = @result.broadcast
      by = settings["broadcaster"] == "http" ? "POSTed to #{settings["broadcast_url"]}" : "sent by a client"
      ratio = b["delivery_ratio"] ? Units.percent(b["delivery_ratio"]) : "-"
      lines = ["  Broadcasts:  #{b["broadcasts"]}, one every #{Units.seconds(settings["interval_s"], digits: 3)}, #{by}; " \
               "#{b["unsent"]} unsent, #{b["failed"]} failed",
               "  Delivery:    #{b["delivered"]} of #{b["expected"]} (#{ratio}) to #{b["receivers"]} clients; " \
               "#{b["missing"]} missing, #{b["duplicates"]} duplicates"]
      if b["complete"].positive?
        lines << "  RTT (last):  #{percentiles(b["rtt_us"])} (#{b["complete"]} broadcasts every client got)"
      end
      lines << "  Each client: #{percentiles(b["delivery_us"])}" if b["delivered"].positive?
      lines
    end

    def hold_line
      "  Held:        #{@result.connected - @result.lost_count} connections through the #{@result.duration_s}s window"
    end

    def problem_lines
      lines = []
      lost = @result.lost
      if lost["total"].positive?
        kinds = lost["by_kind"].select { |_, n| n.positive? }
        lines << "  Lost:        #{kinds.map { |kind, n| "#{kind} #{n}" }.join(", ")} (after they were ready)"
        kinds.each_key { |kind| lines << "               #{kind}: #{lost["reasons"][kind]}" if lost["reasons"][kind] }
      end
      lines << "  TLS failed:  #{@result.tls["reason"]}" if @result.tls && @result.tls["failures"].values.sum.positive?
      lines << "  Warning:     #{@result.warning}" if @result.warning
      lines
    end

    def cpu_line
      cpu = @result.cpu
      per = cpu["us_per_message"] ? format("%.2fus/message", cpu["us_per_message"]) : "no messages"
      format("  Engine CPU:  %s (user %s, system %s, %s of %d thread%s); %s peak",
             per, Units.seconds(cpu["user_s"]), Units.seconds(cpu["system_s"]),
             Units.percent(cpu["utilization"], digits: 0), cpu["threads"], cpu["threads"] == 1 ? "" : "s",
             Units.bytes(@result.memory["max_rss_bytes"]))
    end
  end
end
