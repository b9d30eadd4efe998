# frozen_string_literal: true

require "fileutils"
require_relative "../monotonic_clock"

module Rackbench
  module Services
    # Starts one service of one app, before any trial, and proves it
    # answers: a directory of its own in the run's Workspace given to the
    # service's account, its first-start preparation (initdb), its port
    # checked free, the program started in a process group of its own
    # (ServerProcess: the servers' stop path) as the service's account,
    # behind the guard (the guard's parent-death signal armed under that
    # account), pinned to the server's CPUs, carrying the run's marker (the
    # watchdog finds it), then ready (it answers its own protocol) and
    # given what the app needs (PostgreSQL's role and database). Any
    # failure stops what was started and raises SetupError in one line,
    # naming the service, the app and the service's log.
    class Launch
      include MonotonicClock

      POLL_INTERVAL_S = 0.05
      # What a service's log line says when it fails: PostgreSQL's FATAL
      # or PANIC, Redis's "# Failed ...", memcached's "failed to listen".
      ERROR_LINE = /FATAL:|PANIC:|ERROR:|[Ff]ailed|[Ee]rror|[Aa]bort/

      # :kind :: the service (Services.fetch)
      # :spec :: its Spec (port, settings)
      # :app_name :: the app it serves (its label)
      # :workspace :: the run's Workspace
      # :layout :: the CpuLayout (the service runs on the server's CPUs)
      # :marker_env :: the run's marker (Watchdog), so a sweep finds the service
      # :log_path :: the service's log (its output, initdb's)
      # :ready_timeout_s, :stop_grace_s :: deadlines
      # :runner_pid :: the process whose death ends the service (default: this one)
      # :euid :: this process's effective uid (default: Process.euid; Account)
      # :sampler :: called with the service's ServerProcess, returns a new #start/#stop like Sampler, one per
      #             window (default: a Sampler)
      def initialize(kind:, spec:, app_name:, workspace:, layout:, marker_env:, log_path:, ready_timeout_s:,
                     stop_grace_s:, runner_pid: Process.pid, euid: Process.euid, sampler: nil)
        @kind = kind
        @spec = spec
        @app_name = app_name
        @workspace = workspace
        @layout = layout
        @marker_env = marker_env
        @log_path = log_path
        @ready_timeout_s = ready_timeout_s
        @stop_grace_s = stop_grace_s
        @runner_pid = runner_pid
        @euid = euid
        @sampler = sampler || Sidecar::SAMPLER
      end

      # Starts and checks the service; returns a Running.
      def start
        reason = @kind.missing_reason
        raise SetupError, reason if reason

        launch
      rescue SetupError => e
        raise SetupError, "service #{@kind.name} of app #{@app_name}: #{e.message}"
      end

      private

      def launch
        account = Account.for(@kind.account_name, euid: @euid, title: @kind.title)
        dir = @workspace.service_dir("#{@app_name}-#{@kind.name}", account)
        FileUtils.mkdir_p(File.dirname(@log_path))
        File.write(@log_path, "")
        @kind.prepare(dir: dir, account: account, log: @log_path)
        endpoint = @kind.endpoint(dir: dir, port: @spec.port)
        argv = (account&.prefix || []) + [@workspace.guard_path, @runner_pid.to_s] + @layout.server_prefix +
               @kind.argv(dir: dir, endpoint: endpoint, settings: @spec.settings)
        process, boot_s = Sidecar.start(argv: argv, chdir: dir, log_path: @log_path,
                                        port: endpoint.tcp? ? endpoint.port : nil, marker_env: @marker_env,
                                        stop_grace_s: @stop_grace_s) { |started| boot(started, endpoint) }
        Running.new(kind: @kind, spec: @spec, app_name: @app_name, process: process, endpoint: endpoint, dir: dir,
                    account: account&.name, boot_s: boot_s, sampler: @sampler,
                    stop_grace_s: @stop_grace_s)
      end

      # Ready (it answers its own protocol), then given what the app needs.
      def boot(process, endpoint)
        started = now
        wait_ready(process, endpoint, started)
        @kind.after_ready(endpoint)
        now - started
      end

      def wait_ready(process, endpoint, started)
        loop do
          raise SetupError, failure(process) unless process.alive?
          return if @kind.ready?(endpoint)
          if now - started >= @ready_timeout_s
            raise SetupError, "#{@kind.program} not ready after #{@ready_timeout_s.round} s on #{endpoint} " \
                              "(log: #{@log_path})"
          end

          sleep POLL_INTERVAL_S
        end
      end

      # "postgres exited with status 1 before it was ready: FATAL: ... (log: ...)".
      def failure(process)
        tail = process.log_tail
        error = tail.lines.map(&:strip).reverse.find { |line| line.match?(ERROR_LINE) } || ServerProcess::LogError.line(tail)
        "#{@kind.program} #{process.exit_description} before it was ready#{": #{error}" if error} (log: #{@log_path})"
      end

    end
  end
end
