# frozen_string_literal: true

module Rackbench
  module Capacity
    # The verdict on one step of a search, from what its trial stored: pass
    # (the target percentile held, errors within the ratio, and the engine
    # sent at the asked rate), fail, or invalid (the measurement cannot
    # decide: the search must not conclude from it). A pure function of the
    # trial's outcome and the engine's result document: no I/O.
    #
    # Why a step can be invalid (doc/methodology.md, "Capacity search"):
    # the open-loop engine times each request from when it was scheduled,
    # so a request sent late carries its lateness in its latency, and one
    # never sent carries nothing. So:
    # - the engine's own CPU saturated: its delays are in the latency and
    #   the rate it sent is not the one asked; neither a pass nor a fail
    #   says anything about the server;
    # - a would-be pass whose sends fell behind (requests unsent, or sent
    #   under the asked rate): the latency looks good only because the
    #   server was not asked for the whole rate;
    # - a would-be fail on latency that the sends' lateness could explain
    #   (#lateness): late with connections to spare (the engine's own
    #   delays: a busy machine), or late with every connection busy while
    #   the engine had fewer than twice rate x target of them (Little's
    #   law: its pool fills before the server is slow).
    # A fail beyond any lateness, or with every one of enough connections
    # busy, is the server's: it held them longer than the target.
    module Judge
      # Sends under this share of the asked rate fell behind (the schedule
      # rounds to whole requests: 1% leaves room for that on a short step).
      MIN_SENT_SHARE = 0.98
      # Connections the engine needs at rate x target (Little's law) so
      # that its pool is not what makes requests wait.
      CONNECTION_HEADROOM = 2.0

      # One step's verdict and figures: status :pass, :fail or :invalid;
      # reason (why it failed or is invalid, nil for a pass); latency_us
      # (Hash "p50", "p95", "p99", "p999" and the target's key => µs, from
      # the window's histogram); error_ratio; sent_rps (requests that went
      # out per second of the window); offered_rps; late_fraction; unsent.
      # delivery_ratio: a broadcast step's receipts over those due (BroadcastJudge).
      Verdict = Struct.new(:status, :reason, :latency_us, :error_ratio, :sent_rps, :offered_rps, :late_fraction,
                           :unsent, :delivery_ratio, keyword_init: true) do
        def pass? = status == :pass
        def fail? = status == :fail
        def invalid? = status == :invalid
      end

      FIGURE_PERCENTILES = { "p50" => 50.0, "p90" => 90.0, "p95" => 95.0, "p99" => 99.0, "p999" => 99.9 }.freeze

      module_function

      # settings :: Capacity::Settings
      # rate :: the rate asked (req/s)
      # ok :: whether the trial succeeded (Trial::Record#ok?); nil: no trial ran
      # reason :: the trial's failure reason (nil when ok)
      # result :: the engine's result document (Hash, String keys) or nil
      # connections :: the engine's connections
      def call(settings:, rate:, ok:, reason:, result:, connections:)
        if result.nil?
          why = ok.nil? ? "no trial ran (a configuration the server cannot run?)" : "the trial failed without a measurement: #{reason}"
          return Verdict.new(status: :invalid, reason: why)
        end

        figures = figures(result)
        failure = failure(settings, ok, reason, figures)
        verdict = failure ? :fail : :pass
        problem = guard(settings, rate, result, figures, connections, verdict)
        return Verdict.new(status: :invalid, reason: problem, **figures) if problem

        Verdict.new(status: verdict, reason: failure, **figures)
      end

      # The figures of the window: percentiles from the histogram (the
      # engine's own latency_us has no p95), error ratio, send counts.
      def figures(result)
        histogram = Stats::LatencyHistogram.new(result["histogram"])
        latency = FIGURE_PERCENTILES.transform_values { |p| histogram.percentile_ns(p)&./(1e3) }
        late = result["late"] || {}
        scheduled = late["scheduled"].to_i
        unsent = late["unsent"].to_i
        duration_s = result["duration_s"].to_f
        attempts = LoadResult::Counts.attempts(result)
        { latency_us: latency,
          error_ratio: attempts.zero? ? 0.0 : LoadResult::Counts.failed(result).fdiv(attempts),
          sent_rps: duration_s.positive? ? (scheduled - unsent) / duration_s : 0.0,
          offered_rps: result["offered_rps"], late_fraction: late["fraction"].to_f, unsent: unsent }
      end

      # Why the step fails (a String), or nil when it holds the target.
      def failure(settings, ok, reason, figures)
        measured = figures[:latency_us][settings.percentile_key]
        return "no response in the window" if measured.nil?
        if figures[:error_ratio] > settings.max_error_ratio
          return "errors #{Units.percent(figures[:error_ratio])} above #{Units.percent_trimmed(settings.max_error_ratio, digits: 2)}"
        end
        if measured > settings.target_us
          return "#{settings.percentile_key} #{Units.latency_us(measured)} above #{Units.latency_us(settings.target_us)}"
        end
        return "the trial failed: #{reason}" unless ok

        nil
      end

      # Why the step is invalid (a String), or nil. verdict :: what the
      # figures alone say (:pass or :fail).
      def guard(settings, rate, result, figures, connections, verdict)
        cpu = result["cpu"] || {}
        if cpu["saturated"]
          return "the engine's CPU was saturated (#{Units.percent(cpu["utilization"].to_f, digits: 0)}): " \
                 "its own delays are in the figures; raise load.threads"
        end
        return nil unless result["late"]

        return behind(settings, rate, result, figures) if verdict == :pass
        return nil if figures[:error_ratio] > settings.max_error_ratio # failed on errors, whatever the latency

        lateness(settings, rate, result, figures, connections)
      end

      # A would-be pass whose sends fell behind the asked rate.
      def behind(settings, rate, result, figures)
        unsent = figures[:unsent]
        return nil unless (unsent.positive? && unsent > settings.max_error_ratio * result["late"]["scheduled"].to_i) ||
                          figures[:sent_rps] < MIN_SENT_SHARE * rate

        format("sends fell behind: %.1f of %.1f req/s sent, %d unsent; a pass cannot be concluded",
               figures[:sent_rps], rate, unsent)
      end

      # Whether more requests than the percentile allows exceed the target
      # even if every late request is left out: then the late ones cannot
      # be what failed it. Counted from the histogram's buckets wholly
      # above the target (the one holding the target is left out: an
      # undercount, so this errs towards "could be the lateness").
      def beyond_late_requests?(settings, result, late_requests)
        histogram = Stats::LatencyHistogram.new(result["histogram"])
        target_ns = settings.target_us * 1e3
        over = histogram.buckets.sum { |low, _high, count| low > target_ns ? count : 0 }
        allowed = ((100.0 - settings.percentile) / 100.0 * histogram.total).floor
        over - late_requests > allowed
      end

      # A would-be fail on latency that the sends' lateness could explain.
      # Each latency is lateness + the server's time, so when the measured
      # percentile exceeds the target by more than the largest lateness, or
      # too many requests exceed it for the late ones alone to be those,
      # that share of requests took the server longer than the target: a
      # fail of the server's. Otherwise, where the lateness came from
      # decides: every connection slot busy (the engine's pool reached its
      # size) means requests waited for the server to free one, a fail of
      # the server's if the pool was big enough; a slot still unused means
      # a request never waited for one, so its lateness was the engine's
      # own (a thread that woke late: a busy machine).
      def lateness(settings, rate, result, figures, connections)
        late = result["late"]
        measured = figures[:latency_us][settings.percentile_key]
        return nil if late["requests"].to_i.zero? || measured > settings.target_us + late["max_us"].to_f
        return nil if beyond_late_requests?(settings, result, late["requests"].to_i)

        pool = result["connections"] || {}
        late_text = "#{Units.percent(figures[:late_fraction], digits: 1)} of sends late (up to #{Units.latency_us(late["max_us"])})"
        if pool["established"].nil? || pool["established"] >= pool["requested"].to_i
          needed = (CONNECTION_HEADROOM * rate * settings.target_us / 1e6).ceil
          return nil if connections >= needed

          return "#{late_text} with all #{connections} connections busy: the client's pool may have made requests " \
                 "wait; raise load.connections to at least #{needed}"
        end
        "#{late_text} while #{pool["requested"].to_i - pool["established"]} of #{pool["requested"]} connections " \
          "were never needed: the engine's own delays (a busy machine?) may have made the #{settings.percentile_key}"
      end
    end
  end
end
