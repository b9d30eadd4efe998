# frozen_string_literal: true

module Rackbench
  # The load engine run on a load host (RemoteHost) through ssh: the same
  # argv as a local run, the same LoadResult back, the same deadline,
  # interruption and errors (LoadEngine). What differs is carried by the
  # ssh session's own streams:
  #
  # - the window's phases: the engine writes them to its fd 3, which the
  #   remote shell points at its stdout, so they arrive before the JSON on
  #   the same stream, in order (the engine prints its JSON when it exits,
  #   after the window's end); the bytes before the document's "{" are
  #   phases, relayed as they come;
  # - a request list: its file is the session's stdin (the engine reads
  #   /dev/stdin there), so nothing is copied to the load host;
  # - the target: the server's address as the load host sees it, which is
  #   not a loopback address, so --allow-remote is given: the target is
  #   always the server this run started, never an address from a user.
  class RemoteEngine < LoadEngine
    # ssh's own start and end on top of the engine's deadline.
    SSH_SLACK_S = 15.0

    def initialize(remote, deadline_slack_s: DEADLINE_SLACK_S + SSH_SLACK_S)
      super(binary: remote.engine_path, deadline_slack_s: deadline_slack_s)
      @remote = remote
    end

    # As LoadEngine#run, on the load host. Raises UsageError for a raw CSV
    # (it would be written there).
    def run(settings, env: {}, on_phase: nil)
      raise UsageError, "a raw CSV of every request is not written on a load host (load.host)" if settings.raw_file

      command, stdin = remote_command(settings, on_phase)
      out_r, out_w = IO.pipe
      err_r, err_w = IO.pipe
      pid = Process.spawn(env, *@remote.ssh_argv(*command), out: out_w, err: err_w, in: stdin, pgroup: true)
      [out_w, err_w].each(&:close)
      stdout = Thread.new { read_with_phases(out_r, on_phase) }
      stderr = Thread.new { err_r.read }
      status, interrupted = wait_for(pid, settings.max_run_s + @deadline_slack_s)
      pid = nil
      finish(status, stdout.value, stderr.value, interrupted)
    ensure
      reap(pid) if pid
      [out_r, out_w, err_r, err_w].each { |io| io&.close unless io&.closed? }
    end

    private

    # [words for the remote shell, the local stdin of ssh].
    def remote_command(settings, on_phase)
      args = argv(settings)
      stdin = File::NULL
      if settings.requests_file
        args[args.index("--requests") + 1] = "/dev/stdin"
        stdin = settings.requests_file
      end
      args.insert(-2, "--allow-remote") unless args.include?("--allow-remote")
      return [args, stdin] unless on_phase

      args.insert(-2, "--phase-fd", PHASE_FD.to_s)
      [["sh", "-c", "exec \"$@\" #{PHASE_FD}>&1", "sh", *args], stdin]
    end

    # The engine's stdout: phase bytes, relayed as they arrive, then its
    # JSON document (returned).
    def read_with_phases(reader, on_phase)
      while (byte = reader.read(1))
        return byte + reader.read.to_s if byte == "{"

        phase = PHASES[byte]
        on_phase.call(phase) if phase && on_phase
      end
      ""
    rescue IOError
      ""
    end
  end
end
