# frozen_string_literal: true

module Rackbench
  module Trial
    class Ws < Http
      # What a WebSocket trial's figures are: its result is the engine's
      # rackbench-engine-ws document (doc/output.md), its sample the
      # server's process tree over the window (every client connected),
      # its websocket the idle server's memory before the engine started
      # (the websocket companion). Like every Reading it validates nothing:
      # WsLoadResult did when the engine handed the document over.
      #
      # The rate of a workload: echo's round trips per second, broadcast's
      # receipts per second (every client's copy of every broadcast), and
      # connect's clients made ready per second of the setup.
      module Reading
        extend Trial::Reading

        module_function

        def rate_unit(record = nil)
          record && workload(record) == "connect" ? "conn/s" : "msg/s"
        end

        def workload(record) = record.result&.fetch("workload", nil)

        def rate(record)
          result = record.result
          return nil unless result

          case result["workload"]
          when "echo" then result.dig("echo", "messages_per_s")
          when "broadcast" then per_s(result.dig("broadcast", "delivered"), result["duration_s"])
          else per_s(result.dig("connect", "connected"), result.dig("connect", "duration_s"))
          end
        end

        def requests(record)
          result = record.result
          return nil unless result

          case result["workload"]
          when "echo" then result.dig("echo", "messages")
          when "broadcast" then result.dig("broadcast", "delivered")
          else result.dig("connect", "connected")
          end
        end

        # Clients that failed to connect or were lost, echoes that timed out
        # or were lost, broadcasts that could not go out: what went wrong.
        # A broadcast some client never got is not here but in the
        # delivery ratio (#delivery_ratio).
        def failed_requests(record)
          result = record.result
          return nil unless result

          clients = result.dig("connect", "failed").to_i + result.dig("lost", "total").to_i
          clients + result.dig("echo", "timeouts").to_i + result.dig("echo", "lost").to_i +
            result.dig("broadcast", "failed").to_i
        end

        # The clients asked for, the echoes sent, the broadcasts sent.
        def attempts(record)
          result = record.result
          return nil unless result

          result.dig("connect", "requested").to_i + result.dig("echo", "sent").to_i +
            result.dig("broadcast", "broadcasts").to_i
        end

        # The workload's round trips (echo's; a broadcast's send to its last
        # client's receipt), or the clients' connect times for connect.
        def latency_us(record) = workload_part(record, "latency_us", "rtt_us", "latency_us")
        def histogram(record) = workload_part(record, "histogram", "rtt_histogram", "histogram")
        def measure_s(record) = record.result&.fetch("duration_s", nil)
        def warmup_s(record) = record.result&.dig("warmup", "duration_s")
        # The server's sample is an HTTP trial's.
        def rss_peak_bytes(record) = Http::Reading.rss_peak_bytes(record)
        def pss_peak_bytes(record) = Http::Reading.pss_peak_bytes(record)
        def cpu_user_s(record) = Http::Reading.cpu_user_s(record)
        def cpu_system_s(record) = Http::Reading.cpu_system_s(record)
        def protocol(record) = record.result && (record.result.dig("settings", "cable") ? "cable" : "websocket")

        # The window's per-second timeline in HTTP's shape (requests are
        # round trips or receipts); nil for connect, whose window sends
        # nothing.
        def timeline(record)
          result = record.result
          rows = result && (result.dig("echo", "timeline") || result.dig("broadcast", "timeline"))
          rows&.map do |row|
            { "second" => row["second"], "requests" => row["messages"] || row["deliveries"], "errors" => row["errors"],
              "bytes" => row["bytes"], "p50_us" => row["p50_us"], "p99_us" => row["p99_us"] }
          end
        end

        # Clients ready, asked for, and the seconds until the last was
        # ready (nil unless all were).
        def connected(record) = record.result&.dig("connect", "connected")
        def requested(record) = record.result&.dig("connect", "requested")
        def time_to_all_s(record) = record.result&.dig("connect", "time_to_all_s")

        # Clients that failed before ready or were lost after, and the
        # reasons: { "refused" => 3, "malformed" => 1 }.
        def connection_failures(record)
          result = record.result
          return nil unless result

          counts = [result.dig("connect", "failures"), result.dig("lost", "by_kind")].compact
          counts.reduce({}) { |all, kinds| all.merge(kinds) { |_, a, b| a + b } }.select { |_, n| n.positive? }
        end

        # Broadcast: receipts and receipts due (broadcasts x receivers), for
        # a delivery ratio that sums exactly over batches.
        def delivered(record) = record.result&.dig("broadcast", "delivered")
        def expected(record) = record.result&.dig("broadcast", "expected")

        def delivery_ratio(record) = record.result&.dig("broadcast", "delivery_ratio")

        # The server's memory per connection: its process tree's mean PSS
        # over the window (every client holding its connection) less its
        # PSS idle after boot, over the clients connected; nil without
        # both samples or a client.
        def memory_per_connection_bytes(record)
          holding = record.sample&.fetch("pss_mean_bytes", nil)
          idle = record.websocket&.dig("idle", "pss_bytes")
          clients = connected(record).to_i
          return nil unless holding && idle && clients.positive?

          (holding - idle).fdiv(clients)
        end

        # The server's CPU (user + system, its whole tree) over the window
        # per broadcast sent in it, in µs; nil for another workload.
        def cpu_us_per_broadcast(record)
          broadcasts = record.result&.dig("broadcast", "broadcasts").to_i
          user = cpu_user_s(record)
          system = cpu_system_s(record)
          return nil unless broadcasts.positive? && user && system

          (user + system) * 1e6 / broadcasts
        end

        # "ok 19876.0 msg/s, 1000 clients, RTT p95 12.30ms, delivery 100.00%".
        def summary(record)
          parts = [format("ok %.1f %s", record.rate.to_f, rate_unit(record)),
                   "#{connected(record)}/#{requested(record)} clients"]
          p95 = latency_us(record)&.fetch("p95", nil)
          what = workload(record) == "connect" ? "connect" : "RTT"
          parts << "#{what} p95 #{Units.latency_us(p95)}" if p95
          ratio = delivery_ratio(record)
          parts << "delivery #{Units.percent(ratio)}" if ratio
          memory = memory_per_connection_bytes(record)
          parts << "#{Units.bytes(memory)}/connection" if memory && workload(record) == "connect"
          parts.join(", ")
        end

        def per_s(count, seconds)
          count && seconds.to_f.positive? ? count / seconds.to_f : nil
        end

        # The workload's part of the document: echo's key, broadcast's, or
        # connect's (the setup's, which every workload has).
        def workload_part(record, echo_key, broadcast_key, connect_key)
          result = record.result
          return nil unless result

          case result["workload"]
          when "echo" then result.dig("echo", echo_key)
          when "broadcast" then result.dig("broadcast", broadcast_key)
          else result.dig("connect", connect_key)
          end
        end
      end
    end
  end
end
