# frozen_string_literal: true

module Rackbench
  module Trial
    class Ws < Http
      # The measured part of a WebSocket trial: the engine's run (its
      # clients' setup, then warmup and window) against the booted server,
      # the trial's companions' parts told of the window's edges as the
      # engine reaches them (Http::WindowEdges: the engine signals them only
      # once every client is ready or has failed, so the server's sample
      # holds every connection), then the verdict.
      class LoadRun
        # The engine's timeout when the experiment leaves it to auto.
        DEFAULT_TIMEOUT_S = Experiment::WebSocketLoad::DEFAULTS.fetch("timeout")

        # :trial, :app (an App with its websocket), :server (a ServerProcess), :engine (a LoadEngine)
        # :layout :: the CpuLayout (the engine's CPUs)
        # :seed :: the experiment's seed (each batch's masks and keys: seed + batch)
        # :max_error_rate :: clients failed or lost (and echoes lost) over those asked, above which the
        #                    trial fails
        # :marker_env :: the run's marker for the engine's process (Watchdog)
        # :parts :: the trial's Companions::Parts (default: none)
        def initialize(trial:, app:, server:, engine:, layout:, seed:, max_error_rate:, marker_env:,
                       parts: Http::Companions::Parts.new([]))
          @trial = trial
          @app = app
          @server = server
          @engine = engine
          @layout = layout
          @seed = seed
          @max_error_rate = max_error_rate
          @marker_env = marker_env
          @parts = parts
          @edges = Http::WindowEdges.new(parts)
        end

        # The engine's settings for trial of app against a server at
        # host:port (WsLoadSettings): the workload's path on the app, Action
        # Cable when the app speaks it, the HTTP broadcaster's endpoint.
        def self.settings(trial:, app:, host:, port:, layout:, seed:)
          load = trial.config.load
          websocket = app.websocket
          workload = load[:workload]
          broadcast = workload == "broadcast"
          broadcast_url = broadcast && load[:broadcaster] == "http" ? "http://#{host}:#{port}#{websocket.broadcast_path}" : nil
          WsLoadSettings.build(
            url: "ws://#{host}:#{port}#{websocket.path_for(workload)}", workload: workload, clients: load[:clients],
            threads: load[:threads], ramp_s: load[:ramp_s], duration_s: load[:duration_s], warmup_s: load[:warmup_s],
            timeout_s: load[:timeout_s] || DEFAULT_TIMEOUT_S, rate: load[:rate],
            interval_s: broadcast ? load[:interval_s] : nil, broadcast_url: broadcast_url,
            message_bytes: load[:message_bytes], cable: websocket.cable,
            channel: websocket.cable ? websocket.channel : nil, headers: load[:headers],
            seed: seed + trial.batch, cpus: layout.engine_cpus
          )
        end

        # Measures; returns the record's fields of the measurement: result
        # (the engine's document), load_settings, status and reason, and
        # what the parts keep of the window. What the parts keep also goes
        # into facts as soon as the window ends.
        def run(facts = {})
          settings = self.class.settings(trial: @trial, app: @app, host: @server.host, port: @server.port,
                                         layout: @layout, seed: @seed)
          facts[:load_settings] = @parts.record_settings(settings.to_h.transform_keys(&:to_s))
          kept = {}
          result = begin
            @engine.run(settings, env: @marker_env, on_phase: @edges.method(:on_phase))
          ensure
            @edges.end!
            @parts.call(:keep, kept)
            facts.merge!(kept)
          end
          { result: result.to_h, **kept, load_settings: facts[:load_settings], **Verdict.call(result, server: @server,
                                                                                              parts: @parts, max_error_rate: @max_error_rate) }
        end
      end

      # The verdict on a WebSocket run: ok, or failed with the reason.
      module Verdict
        module_function

        # result :: the WsLoadResult; server :: the ServerProcess; parts ::
        # the Companions::Parts; max_error_rate :: the share of failures
        # (clients failed or lost, echoes lost) above which it fails.
        #
        # A broadcast's delivery is a figure, never a failure: a server that
        # drops one broadcast in ten measured a delivery of 0.9, which the
        # report shows and a capacity search stops on.
        def call(result, server:, parts:, max_error_rate:)
          return failed(server.failure("during the measurement")) unless server.alive?

          beside = parts.failure("during the measurement")
          return failed(beside) if beside
          return failed("interrupted") if result.interrupted?
          if result.connected.zero?
            return failed("no client connected (of #{result.requested}): #{result.failure_lines.first || "no reason"}")
          end

          rate = failure_rate(result)
          return { status: "ok" } if rate <= max_error_rate

          failed(format("failures %.2f%% above %.2f%%: %s", rate * 100, max_error_rate * 100,
                        result.failure_lines.concat(echo_lines(result)).join("; ")))
        end

        # Clients failed or lost over those asked, plus echoes that timed
        # out or were lost over those sent.
        def failure_rate(result)
          clients = (result.connect["failed"] + result.lost_count).fdiv(result.requested)
          echo = result.echo
          return clients unless echo && echo["sent"].positive?

          clients + (echo["timeouts"] + echo["lost"]).fdiv(echo["sent"])
        end

        def echo_lines(result)
          echo = result.echo
          return [] unless echo

          lost = echo["timeouts"] + echo["lost"]
          lost.positive? ? ["#{lost} echoes not back (#{echo["timeouts"]} timed out, #{echo["lost"]} lost)"] : []
        end

        def failed(reason)
          { status: "failed", reason: reason }
        end
      end
    end
  end
end
