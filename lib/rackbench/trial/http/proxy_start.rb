# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # A proxied trial's proxy (`proxy:`, doc/topologies.md): started in
      # front of the booted server once the server's own identity and app
      # checks passed (Proxy::Launch), and stopped before the server, its
      # document kept in the record whatever happened.
      class ProxyStart
        # :trial, :app, :server (the booted ServerProcess), :context (Trial::Context), :guard (Kind#guard),
        # :proxies (name => topology), :launcher (Proxy::Launch.new's keywords => #start),
        # :work_dir (the trial's directory)
        def initialize(trial:, app:, server:, context:, guard:, proxies:, launcher:, work_dir:)
          @launcher = launcher
          @trial = trial
          @app = app
          @server = server
          @context = context
          @guard = guard
          @proxies = proxies
          @work_dir = work_dir
        end

        # The Proxy::Running in front of the server, or nil for a trial
        # without a proxy. Raises SetupError naming the proxy when it cannot
        # start (nothing of it is left running).
        def start
          config = @trial.config
          return nil unless config.proxied?

          running = @launcher.call(topology: @proxies.call(config.proxy), server: @server, app: @app,
                                   trial_dir: @work_dir, layout: @context.layout, guard: @guard,
                                   marker_env: @context.marker_env, connections: config.load[:connections],
                                   ready_timeout_s: @context.ready_timeout_s,
                                   stop_grace_s: @context.stop_grace_s).start
          check_session(config, running)
          running
        end

        private

        # The session check (ServerProcess::SessionCheck) through the proxy
        # too, for an app that has one: a login and its pages must work
        # through the proxy as they did on the server itself. A failure
        # stops the proxy.
        def check_session(config, running)
          file = config.load[:requests_file] || @app.requests
          return unless @app.expect_session_body && file

          ServerProcess::SessionCheck.verify!(url: "http://#{Servers::HOST}:#{running.port}#{@app.load_path}",
                                              requests_file: file, expect_body: @app.expect_session_body,
                                              headers: config.load[:headers] || [],
                                              cookie_presets: config.load[:cookie_presets] || [],
                                              timeout_s: config.load[:timeout_s])
        rescue StandardError, Interrupt => e
          running.stop_process
          raise e.is_a?(SetupError) ? SetupError.new("proxy #{running.topology.name}: #{e.message}") : e
        end

        public

        # Stops proxy (a Proxy::Running, or nil) and puts its document into
        # facts (the record's proxy field).
        def self.stop(proxy, facts)
          return unless proxy

          begin
            proxy.stop_process
          ensure
            facts[:proxy] = proxy.to_h
          end
        end
      end
    end
  end
end
