# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Proxy
    # Starts one trial's proxy in front of its booted server and proves it
    # before anything is measured: a configuration generated into the
    # trial's directory from the server's own port, a free port of its own,
    # pinned to the server's CPUs and started beside the server (Sidecar:
    # tied to the runner's life, its own process group, PATH only), ready
    # (the app's health answers through it), and the app's check passed
    # through it. Any failure stops what was started and raises SetupError
    # naming the proxy.
    class Launch
      DIRECTORY = "proxy"
      LOG = "proxy.log"
      # Idle upstream connections nginx keeps at the least per worker.
      MIN_KEEPALIVE = 16

      # :topology :: the proxy (Proxy.fetch)
      # :server :: the trial's booted ServerProcess (its port is the only upstream)
      # :app :: the App (health path and the app check's expectations)
      # :trial_dir :: the trial's directory; the proxy gets proxy/ in it
      # :layout :: the CpuLayout (the proxy runs on the server's CPUs)
      # :guard :: the argv prefix tying the proxy's life to the runner's (Kind#guard)
      # :marker_env :: the run's marker (Watchdog), so a sweep finds the proxy
      # :connections :: the load's connections (the upstream's idle keep-alive pool follows)
      # :ready_timeout_s, :stop_grace_s :: deadlines
      # :port :: the proxy's port (default: a free one; tests pass a taken one)
      # :sampler :: called with the proxy's ServerProcess, returns #start/#stop like Sampler (default: a Sampler)
      def initialize(topology:, server:, app:, trial_dir:, layout:, guard:, marker_env:, connections:,
                     ready_timeout_s:, stop_grace_s:, port: nil, sampler: nil)
        @topology = topology
        @server = server
        @app = app
        @dir = File.join(trial_dir, DIRECTORY)
        @layout = layout
        @guard = guard
        @marker_env = marker_env
        @connections = connections
        @ready_timeout_s = ready_timeout_s
        @stop_grace_s = stop_grace_s
        @port = port
        @sampler = sampler || Sidecar::SAMPLER
      end

      # Starts and checks the proxy; returns a Running.
      def start
        reason = @topology.unsupported_reason
        raise SetupError, reason if reason # it names the proxy already

        launch
      end

      private

      def launch
        FileUtils.rm_rf(@dir) # an earlier attempt's cache must not serve this one
        FileUtils.mkdir_p(@dir)
        port = @port || Ports.free_port
        argv = @guard + @layout.server_prefix + @topology.prepare(
          dir: @dir, listen_port: port, upstream_port: @server.port, workers: workers,
          keepalive: [@connections, MIN_KEEPALIVE].max, marker: Watchdog::MARKER
        )
        _, running = Sidecar.start(argv: argv, chdir: @dir, log_path: File.join(@dir, LOG), port: port,
                                   marker_env: @marker_env, stop_grace_s: @stop_grace_s) do |process|
          boot_s = boot(process)
          Running.new(topology: @topology, process: process, dir: @dir, boot_s: boot_s, version: @topology.version,
                      sampler: @sampler.call(process), stop_grace_s: @stop_grace_s)
        end
        running
      rescue SetupError => e
        raise SetupError, "proxy #{@topology.name}: #{e.message}"
      end

      # Ready (the app's health answers through it), and what the load will
      # get through the proxy must be what the app check accepted from the
      # server itself.
      def boot(process)
        boot_s = process.wait_ready(health_path: @app.health, timeout_s: @ready_timeout_s)
        process.check_app(path: @app.load_path, expect_status: @app.expect_status,
                          expect_content_type: @app.expect_content_type, expect_body: @app.expect_body)
        boot_s
      end

      # One worker per server CPU: the proxy shares them with the server
      # (doc/topologies.md), as on a one-machine deployment.
      def workers
        @layout.pinned? ? @layout.server_cpus.size : 1
      end

    end
  end
end
