# frozen_string_literal: true

require_relative "http"

module Rackbench
  module Trial
    # A WebSocket trial (load.workload connect, echo or broadcast;
    # doc/websockets.md): everything of an HTTP trial up to the measurement
    # (the app's bundle with the server's gems, the server's environment
    # from named sources, the boot and the proof of what runs, the
    # companions beside it: the sampler, the machine's load, the app's
    # services, the counting agent, the window's marks), then the load
    # engine's WebSocket run (Ws::LoadRun): every client connected first,
    # the server's memory sampled idle before and holding during the
    # window (the websocket companion), and the verdict of a WebSocket run.
    #
    # It is Trial::Http with the measured step replaced rather than a kind
    # beside it: the bundle, the launch, the identity proof and the
    # companions' hooks are the HTTP kind's own methods, and a copy of them
    # would drift. No calibration: a WebSocket run's timeout bounds a
    # client's connect, an echo and the last broadcast's wait, and is the
    # experiment's (load.timeout, 10 s unless it says).
    class Ws < Http
      NAME = "ws"
      # Open files a server needs beyond its clients' sockets: its listener,
      # logs, the app's files and services, a database pool.
      NOFILE_SPARE = 256

      def self.reading = Ws::Reading

      # What the server cannot serve (its limits, no WebSocket), what the
      # app cannot (no websocket:, no broadcast endpoint for an HTTP
      # broadcaster, broadcasts that would reach one process of several),
      # and what a companion cannot do.
      def unsupported_reason(config, variant)
        engine = variant.install.engine
        server = Servers.fetch(config.server.name)
        app = App.resolve(config.app)
        server.unsupported_reason(processes: config.processes, threads: config.threads, ruby_engine: engine,
                                  options: config.server.options) ||
          server.websocket_reason || app.unsupported_reason(engine) || app_reason(app, config) ||
          @companions.unsupported_reason(config, variant)
      end

      # The HTTP kind's checks, and the open files the servers need: every
      # client is a socket in some server process, which inherits the
      # runner's limit. Its soft limit is raised to what the most clients
      # of the experiment need (up to the hard limit); beyond the hard
      # limit, one line says what to run first.
      def check!
        super
        clients = source.configurations.map { |config| config.load[:clients].to_i }.max.to_i
        needed = clients + NOFILE_SPARE
        soft, hard = Process.getrlimit(:NOFILE)
        return if soft >= needed

        unless hard == Process::RLIM_INFINITY || hard >= needed
          raise ConfigError, "load.clients #{clients} need #{needed} open files in the server, and the limit is " \
                             "#{soft} (hard #{hard}): run `ulimit -n #{needed}` first (as root, or after raising the " \
                             "hard limit in /etc/security/limits.conf)"
        end
        Process.setrlimit(:NOFILE, needed, hard)
      end

      private

      def app_reason(app, config)
        websocket = app.websocket
        return "app #{app.name} serves no WebSocket: give it websocket: (path:, cable:)" unless websocket

        load = config.load
        return nil unless load[:workload] == "broadcast"

        if load[:broadcaster] == "http" && websocket.broadcast_path.nil?
          return "app #{app.name} has no websocket.broadcast_path for load.broadcaster http"
        end
        websocket.broadcast_reason(app.name, config.processes, app.services)
      end

      def load_run(scene, parts, server)
        Ws::LoadRun.new(trial: scene.trial, app: scene.app, server: server, engine: @engine,
                        layout: @context.layout, seed: source.seed,
                        max_error_rate: scene.app.max_error_rate || @max_error_rate,
                        marker_env: @context.marker_env, parts: parts)
      end

      # Every key of its load, the WebSocket ones first among them.
      def record_load(load) = load

      # No calibration (see the class's comment).
      def calibrate_first(*); end

      # "ws-rack-puma-r345-p1-t1-broadcast-c1000": the workload and its
      # clients name a trial's log and directory too.
      def slug_parts(config)
        [*super, config.load[:workload], "c#{config.load[:clients]}"]
      end
    end

    register Ws::NAME, Ws
  end
end

require_relative "ws/reading"
require_relative "ws/load_run"
