# frozen_string_literal: true

module Rackbench
  module Capacity
    # The verdict on one step of a broadcast's search (a WebSocket
    # workload: the step is a number of subscribed clients), from what its
    # trial stored: pass (the broadcasts' round trip held the target
    # percentile, their delivery the minimum, and clients failed or lost
    # within the error ratio), fail, or invalid (the measurement cannot
    # decide). A pure function, as Judge.
    #
    # The round trip runs from a broadcast's send to its last receiver's
    # receipt (doc/websockets.md), over the broadcasts every receiver got;
    # a broadcast some receiver never got has none and counts against the
    # delivery instead, so a server that drops messages fails on delivery
    # however fast it delivers the rest. Invalid: the engine's own CPU
    # saturated (its delays are in every round trip), or a setup that left
    # clients neither ready nor failed (an interrupted run).
    module BroadcastJudge
      module_function

      # settings :: Capacity::Settings (broadcast?)
      # clients :: the step's clients
      # ok, reason :: the trial's outcome (nil ok: no trial ran)
      # result :: the engine's rackbench-engine-ws document, or nil
      def call(settings:, clients:, ok:, reason:, result:)
        if result.nil? || result["broadcast"].nil?
          why = ok.nil? ? "no trial ran (a configuration the server cannot run?)" : "the trial failed without a measurement: #{reason}"
          return Judge::Verdict.new(status: :invalid, reason: why)
        end

        figures = figures(result)
        problem = invalid(result, clients)
        return Judge::Verdict.new(status: :invalid, reason: problem, **figures) if problem

        failure = failure(settings, ok, reason, result, figures)
        Judge::Verdict.new(status: failure ? :fail : :pass, reason: failure, **figures)
      end

      # The round trip's percentiles from the window's histogram, and the
      # share of clients that failed or were lost.
      def figures(result)
        histogram = Stats::LatencyHistogram.new(result["broadcast"]["rtt_histogram"])
        requested = result.dig("connect", "requested").to_i
        lost = result.dig("connect", "failed").to_i + result.dig("lost", "total").to_i
        { latency_us: Judge::FIGURE_PERCENTILES.transform_values { |p| histogram.percentile_ns(p)&./(1e3) },
          error_ratio: requested.zero? ? 0.0 : lost.fdiv(requested), delivery_ratio: result["broadcast"]["delivery_ratio"] }
      end

      def failure(settings, ok, reason, result, figures)
        delivery = figures[:delivery_ratio]
        if delivery.nil? || delivery < settings.min_delivery_ratio
          return "delivery #{delivery ? Units.percent(delivery, digits: 3) : "none"} under " \
                 "#{Units.percent_trimmed(settings.min_delivery_ratio, digits: 3)}"
        end
        if figures[:error_ratio] > settings.max_error_ratio
          return "clients failed or lost #{Units.percent(figures[:error_ratio])} above " \
                 "#{Units.percent_trimmed(settings.max_error_ratio, digits: 2)}"
        end
        measured = figures[:latency_us][settings.percentile_key]
        return "no broadcast reached every client" if measured.nil?
        if measured > settings.target_us
          return "broadcast #{settings.percentile_key} #{Units.latency_us(measured)} above #{Units.latency_us(settings.target_us)}"
        end
        return "the trial failed: #{reason}" unless ok

        nil
      end

      def invalid(result, clients)
        cpu = result["cpu"] || {}
        if cpu["saturated"]
          return "the engine's CPU was saturated (#{Units.percent(cpu["utilization"].to_f, digits: 0)}): its own " \
                 "delays are in the round trips; raise load.threads"
        end
        unfinished = result.dig("connect", "unfinished").to_i
        return nil unless unfinished.positive? || result.dig("connect", "requested").to_i != clients.round

        "the setup did not finish: #{unfinished} of #{clients.round} clients neither ready nor failed"
      end
    end
  end
end
