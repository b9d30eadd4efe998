# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # A proxied trial's proxy (`proxy:`, doc/topologies.md): started in
        # front of the booted server once the server's own identity and app
        # checks passed (Proxy::Launch), the load sent to it, its process
        # tree sampled and its cache counted over the window, a proxy that
        # died failing the trial, and stopped before the server, its document
        # kept in the record (+proxy+) whatever happened.
        class Proxy < Companion
          ORDER = 50

          # :proxies :: called with a proxy name, returns its topology (default: Rackbench::Proxy.fetch;
          #             tests pass one with a missing binary)
          # :launcher :: called with Proxy::Launch.new's keywords, returns an object whose #start returns a
          #              Proxy::Running (default: Proxy::Launch.new)
          def initialize(setup, proxies: Rackbench::Proxy.method(:fetch), launcher: Rackbench::Proxy::Launch.method(:new))
            super(setup)
            @proxies = proxies
            @launcher = launcher
          end

          # A proxy whose program is not installed.
          def unsupported_reason(config, _variant)
            config.proxied? ? @proxies.call(config.proxy).unsupported_reason : nil
          end

          def beside_server
            source = setup.source
            source.respond_to?(:proxy) && source.proxy != [Rackbench::Proxy::NONE] ? "the proxy" : nil
          end

          def part(scene)
            return nil unless scene.config.proxied?

            Part.new(scene, setup, @proxies.call(scene.config.proxy), @launcher)
          end

          # One trial's proxy.
          class Part < Companion::Part
            def initialize(scene, setup, topology, launcher)
              super()
              @scene = scene
              @setup = setup
              @topology = topology
              @launcher = launcher
            end

            # Starts the proxy in front of the booted server; raises
            # SetupError naming the proxy when it cannot start (nothing of
            # it is left running).
            def after_boot(booted)
              context = @setup.context
              config = @scene.config
              running = @launcher.call(topology: @topology, server: booted.server, app: @scene.app,
                                       trial_dir: @scene.work_dir, layout: context.layout, guard: @setup.guard,
                                       marker_env: context.marker_env, connections: config.load[:connections],
                                       ready_timeout_s: context.ready_timeout_s,
                                       stop_grace_s: context.stop_grace_s).start
              check_session(config, running)
              @running = running
            end

            def target_port
              @running&.port
            end

            # The proxy keeps its own window (Proxy::Running).
            def window_started
              @running&.start
            end

            def window_ended
              @running&.stop
            end

            def failure(when_text)
              @running && !@running.alive? ? @running.failure(when_text) : nil
            end

            # Stops the proxy (before the server it forwards to) and keeps
            # its document.
            def stop(facts)
              return unless @running

              begin
                @running.stop_process
              ensure
                facts[:proxy] = @running.to_h
              end
            end

            private

            # The session check (ServerProcess::SessionCheck) through the
            # proxy too, for an app that has one: a login and its pages must
            # work through the proxy as they did on the server itself. A
            # failure stops the proxy.
            def check_session(config, running)
              app = @scene.app
              file = config.load[:requests_file] || app.requests
              return unless app.expect_session_body && file

              ServerProcess::SessionCheck.verify!(url: "http://#{Servers::HOST}:#{running.port}#{app.load_path}",
                                                  requests_file: file, expect_body: app.expect_session_body,
                                                  headers: config.load[:headers] || [],
                                                  cookie_presets: config.load[:cookie_presets] || [],
                                                  timeout_s: config.load[:timeout_s])
            rescue StandardError, Interrupt => e
              running.stop_process
              raise e.is_a?(SetupError) ? SetupError.new("proxy #{running.topology.name}: #{e.message}") : e
            end
          end
        end

        Http.companion :proxy, Proxy
      end
    end
  end
end
