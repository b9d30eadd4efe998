# frozen_string_literal: true

require "json"

module Rackbench
  # Runs the native load engine (ext/rackbench_engine, installed as
  # lib/rackbench-engine) for one LoadSettings and returns a LoadResult,
  # or for one WsLoadSettings (a ws:// or wss:// URL) and returns a
  # WsLoadResult. Both `rackbench load` and the experiment runner go
  # through this class.
  #
  # The engine runs in its own process group, so a Ctrl-C in the terminal
  # reaches only rackbench, which then stops the engine with TERM: the
  # engine prints what it measured so far and the caller gets it inside
  # Rackbench::Interrupted. A watchdog kills an engine that overruns its
  # deadline (warmup + duration + timeout + 10 s); the engine is always
  # reaped.
  class LoadEngine
    BINARY_NAME = "rackbench-engine"
    # How long a TERMed engine may take to print its result before KILL.
    STOP_GRACE_S = 5.0
    # Start-up and exit allowance beyond the run itself before the watchdog
    # decides the engine hangs.
    DEADLINE_SLACK_S = 10.0

    def self.default_binary
      ENV.fetch("RACKBENCH_ENGINE") { File.expand_path("../../#{BINARY_NAME}", __dir__) }
    end

    attr_reader :binary

    # :binary :: path of the engine executable (default: lib/rackbench-engine, or $RACKBENCH_ENGINE)
    # :deadline_slack_s :: allowance past the run's own maximum length (default: 10)
    def initialize(binary: self.class.default_binary, deadline_slack_s: DEADLINE_SLACK_S)
      @binary = binary
      @deadline_slack_s = deadline_slack_s
    end

    # The command line for settings (an Array, never a shell string).
    def argv(settings)
      return [binary, *settings.engine_arguments, settings.url] if settings.websocket?

      window = settings.count? ? ["--count", settings.count.to_s] : ["-d", Duration.to_engine(settings.duration_s)]
      warmup = settings.warmup_count ? ["--warmup-count", settings.warmup_count.to_s] : ["-w", Duration.to_engine(settings.warmup_s)]
      args = [binary, "-c", settings.connections.to_s, "-t", settings.threads.to_s, *window, *warmup,
              "--timeout", Duration.to_engine(settings.timeout_s), "--seed", settings.seed.to_s]
      args.push("--rate", format_rate(settings.rate)) if settings.rate
      args.push("--think", Duration.to_engine(settings.think_s)) if settings.think_s.positive?
      args.push("--quiet-pids", settings.quiet_pids_file) if settings.quiet_pids_file
      args << "--no-keepalive" unless settings.keepalive
      settings.headers.each { |h| args.push("-H", h) }
      args.push("-m", settings.method) unless settings.method == "GET"
      args.push("--body", settings.body) if settings.body
      args.push("--requests", settings.requests_file) if settings.requests_file
      args << "--cookies" if settings.cookies
      settings.cookie_presets.each { |c| args.push("--cookie", c) }
      args.push("--raw", settings.raw_file) if settings.raw_file
      args.push("--cpus", settings.cpu_list) if settings.cpus
      args << "--allow-remote" if settings.allow_remote
      args.push("--protocol", settings.protocol, "--streams", settings.streams.to_s) if settings.h2c?
      args.push("--cacert", settings.ca_file) if settings.ca_file
      args << "--insecure" if settings.insecure
      args << "--no-tls-resume" unless settings.tls_resume
      args << settings.url
    end

    # Runs the engine. Returns a LoadResult; raises UsageError (the engine
    # refused the arguments), EngineError (it failed or misbehaved) or
    # Interrupted (with the partial result, when there is one).
    #
    # :env :: more variables for the engine, e.g. the run's marker (Watchdog.marker_env; default: {})
    # :on_phase :: called on a thread of its own with :measure when the
    #              engine's measured window starts and :end when it ends
    #              (the engine says so through --phase-fd), so that what
    #              samples the server covers exactly the window. A window of a
    #              fixed count waits at each edge until the call has returned
    #              (--hold-fd): the runner's own edge (valgrind's
    #              instrumentation switched on) is in place before the first
    #              request of the window (default: nil)
    def run(settings, env: {}, on_phase: nil)
      ensure_binary!
      out_r, out_w = IO.pipe
      err_r, err_w = IO.pipe
      phase_r, phase_w = IO.pipe if on_phase
      hold_r, hold_w = IO.pipe if on_phase && settings.count?
      # The engine stops if this process dies; it checks it was started by us.
      env = env.merge("RACKBENCH_PARENT_PID" => Process.pid.to_s)
      args = argv(settings)
      args.insert(-2, "--phase-fd", PHASE_FD.to_s) if on_phase
      args.insert(-2, "--hold-fd", HOLD_FD.to_s) if hold_r
      fds = { PHASE_FD => phase_w, HOLD_FD => hold_r }.compact
      pid = Process.spawn(env, *args, out: out_w, err: err_w, in: File::NULL, pgroup: true, **fds)
      [out_w, err_w, phase_w, hold_r].compact.each(&:close)
      stdout = Thread.new { out_r.read }
      stderr = Thread.new { err_r.read }
      @held_s = 0.0
      phases = Thread.new { relay_phases(phase_r, on_phase, hold_w) } if on_phase
      status, interrupted = wait_for(pid, settings.max_run_s + @deadline_slack_s)
      pid = nil # reaped: never signal a PID that may have been reused
      phases&.join
      finish(status, stdout.value, stderr.value, interrupted)
    ensure
      reap(pid) if pid
      phases&.kill
      [out_r, out_w, err_r, err_w, phase_r, phase_w, hold_r, hold_w].each { |io| io&.close unless io&.closed? }
    end

    private

    # The engine's descriptors for --phase-fd and --hold-fd (0-2 are its own).
    PHASE_FD = 3
    HOLD_FD = 4
    PHASES = { "m" => :measure, "e" => :end }.freeze

    # Reads the engine's phase bytes until it closes its end (it does at
    # the end of its window, and the kernel does when it exits). The
    # callback must not raise: its exception would surface at the join.
    # With +hold+ (the write end of --hold-fd), the engine waits after each
    # phase for the byte written here once the callback has returned; the
    # time the callbacks take is added to the engine's deadline (@held_s).
    def relay_phases(reader, on_phase, hold = nil)
      while (byte = reader.read(1))
        phase = PHASES[byte]
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        begin
          on_phase.call(phase) if phase
        ensure
          # Even after a callback that raised: a held engine must go on.
          if hold
            @held_s += Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
            release(hold)
          end
        end
      end
    rescue IOError
      nil
    end

    # Lets a held engine go on; an engine that is gone (EPIPE) needs nothing.
    def release(hold)
      hold.write("h")
    rescue Errno::EPIPE, IOError
      nil
    end

    def ensure_binary!
      return if File.executable?(binary)

      raise EngineError, "load engine not found at #{binary}: run bin/setup (or rake compile)"
    end

    def format_rate(rate)
      rate == rate.to_i ? rate.to_i.to_s : rate.to_s
    end

    # Waits for the engine, killing it past the deadline (which the time it
    # was held at its window's edges extends). Returns
    # [Process::Status, interrupted?].
    def wait_for(pid, deadline_s)
      watchdog = Thread.new do
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        while (left = started + deadline_s + @held_s.to_f - Process.clock_gettime(Process::CLOCK_MONOTONIC)).positive?
          sleep [left, 1.0].min
        end
        Process.kill(:KILL, pid)
      rescue Errno::ESRCH
        nil
      end
      begin
        [Process.wait2(pid).last, false]
      rescue Interrupt
        stop(pid)
      end
    ensure
      watchdog&.kill
    end

    # Ctrl-C: TERM lets the engine print its partial result; KILL if it hangs.
    def stop(pid)
      Process.kill(:TERM, pid)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + STOP_GRACE_S
      loop do
        done = Process.wait2(pid, Process::WNOHANG)
        return [done.last, true] if done

        if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
          Process.kill(:KILL, pid)
          return [Process.wait2(pid).last, true]
        end
        sleep 0.02
      end
    end

    def reap(pid)
      Process.kill(:KILL, pid)
      Process.wait(pid)
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end

    def finish(status, stdout, stderr, interrupted)
      message = stderr.to_s.lines.map(&:strip).reject(&:empty?).last
      if interrupted
        partial = parse(stdout) if status&.success?
        raise Interrupted.new("interrupted", partial_result: partial)
      end
      if status.signaled?
        raise EngineError, "load engine killed by signal #{Signal.signame(status.termsig)}" \
                           "#{" (it overran its deadline)" if status.termsig == 9}"
      end
      raise UsageError, message.to_s.sub(/\Arackbench-engine: /, "") if status.exitstatus == 2
      raise EngineError, message || "load engine failed with exit status #{status.exitstatus}" unless status.success?

      parse(stdout, warning: message)
    end

    # The document as its format says: HTTP's, or a WebSocket run's.
    def parse(stdout, warning: nil)
      data = JSON.parse(stdout)
      return WsLoadResult.new(data, warning: warning) if data.is_a?(Hash) && data["format"] == WsLoadResult::FORMAT

      LoadResult.new(data, warning: warning)
    rescue JSON::ParserError => e
      raise EngineError, "load engine printed invalid JSON: #{e.message[0, 120]}"
    end
  end
end
