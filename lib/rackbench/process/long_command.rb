# frozen_string_literal: true

module Rackbench
  # Runs a command that takes minutes (a compiler building Passenger's
  # agent or a ruby), its output appended to a log file, in its own process
  # group: a timeout or an interruption of rackbench (Ctrl-C, TERM, an
  # error in a progress line) stops the whole group, compilers and all, and
  # reaps it. While it runs, the caller is called every interval_s with the
  # time spent, to say how it goes.
  module LongCommand
    POLL_INTERVAL_S = 0.05

    # Runs argv; returns its Process::Status, or nil when timeout_s passed
    # (the group killed). Yields the elapsed seconds every interval_s.
    # Raises SystemCallError when argv cannot be started.
    #
    # :env :: variables for the command
    # :log :: the file its output is appended to
    # :chdir :: its working directory
    # :timeout_s :: the deadline
    # :interval_s :: how often to yield (default: 15)
    # :unsetenv_others :: env is the whole environment (default: false: added to this process's)
    def self.run(argv, env:, log:, chdir:, timeout_s:, interval_s: 15.0, unsetenv_others: false)
      File.write(log, "# #{argv.join(" ")}\n", mode: "a")
      started = now
      pid = Process.spawn(env, *argv, chdir: chdir, in: File::NULL, %i[out err] => [log, "a"], pgroup: true,
                                      unsetenv_others: unsetenv_others)
      shown = started
      loop do
        waited, status = Process.waitpid2(pid, Process::WNOHANG)
        if waited
          pid = nil
          return status
        end
        return kill(pid).tap { pid = nil } if now - started > timeout_s

        if now - shown >= interval_s
          shown = now
          yield shown - started if block_given?
        end
        sleep POLL_INTERVAL_S
      end
    ensure
      kill(pid) if pid
    end

    def self.kill(pid)
      Process.kill(:KILL, -pid)
      Process.wait(pid)
      nil
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end

    def self.now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    private_class_method :kill, :now
  end
end
