# frozen_string_literal: true

module Rackbench
  module Rubies
    # Runs a short-lived helper command (a ruby probe, `bundle install`,
    # `gem install`) to completion with a deadline. The command runs from
    # an argv (never a shell), in its own process group so that everything
    # it starts (a compiler building a native gem, the JVM behind JRuby's
    # launcher script) is stopped with it: TERM to the group, a grace
    # period, then KILL. The child is always reaped, also when the caller
    # is interrupted.
    module Child
      # status :: Process::Status
      # output :: combined stdout and stderr when captured (no log_path), else nil
      # timed_out :: true when the deadline passed and the command was stopped
      Result = Struct.new(:status, :output, :timed_out, keyword_init: true) do
        def success?
          !timed_out && status.success?
        end
      end

      # How long a TERMed group may take to exit before KILL.
      STOP_GRACE_S = 5.0
      # How long output may keep flowing after the command exits (from
      # something it left running) before the group is killed.
      DRAIN_GRACE_S = 2.0

      # Runs argv and waits for it. Raises SystemCallError when the command
      # cannot be started (missing, not executable).
      #
      # :env :: the child's whole environment (nothing else is inherited)
      # :timeout_s :: deadline for the command to finish
      # :log_path :: append output to this file instead of capturing it (default: nil)
      # :chdir :: working directory (default: the current one)
      # :drain_grace_s :: how long output may flow after the command exits (default: 2)
      def self.run(argv, env:, timeout_s:, log_path: nil, chdir: nil, drain_grace_s: DRAIN_GRACE_S)
        log = File.open(log_path, "a") if log_path
        reader, writer = IO.pipe unless log
        out = log || writer
        # [path, argv0] keeps a one-element argv from going through a shell.
        pid = Process.spawn(env, [argv.first, argv.first], *argv.drop(1),
                            unsetenv_others: true, pgroup: true, in: File::NULL, out: out, err: out,
                            chdir: chdir || Dir.pwd)
        writer&.close
        drain = Thread.new { reader.read } if reader
        waiter = Process.detach(pid)
        timed_out = waiter.join(timeout_s).nil?
        stop_group(pid, waiter) if timed_out
        output = drain && collect(drain, pid, drain_grace_s)
        # What the command left running in its group (a hook's `cmd &`)
        # must not live on beside the servers measured next: with a pipe,
        # collect has killed it already when it held the pipe open.
        signal_group("TERM", pid) if log
        Result.new(status: waiter.value, output: output, timed_out: timed_out)
      ensure
        # Only reached with the child alive when the caller was interrupted.
        stop_group(pid, waiter) if waiter&.alive?
        drain&.kill
        [reader, writer, log].each { |io| io.close if io && !io.closed? }
      end

      # TERM, wait, KILL, reap. The group id is still valid here because
      # the leader has not been reaped yet.
      def self.stop_group(pid, waiter)
        signal_group("TERM", pid)
        return if waiter.join(STOP_GRACE_S)

        signal_group("KILL", pid)
        waiter.join
      end

      # The output, once the pipe closes. A process the command left behind
      # may hold the pipe open; it is killed rather than waited for. Its
      # group still exists in that case, so the group id is safe to signal.
      def self.collect(drain, pid, grace_s)
        return drain.value if drain.join(grace_s)

        signal_group("KILL", pid)
        drain.value
      end

      def self.signal_group(signal, pid)
        Process.kill(signal, -pid)
      rescue Errno::ESRCH, Errno::EPERM
        nil
      end

      private_class_method :stop_group, :collect, :signal_group
    end
  end
end
