# frozen_string_literal: true

module Rackbench
  module Instructions
    # Switches callgrind's instrumentation on and off in running processes,
    # and has them write their counts (a dump), through vgdb: one vgdb per
    # process, all at once (each takes 0.1-0.3 s, mostly waiting for a
    # process blocked in a system call to be woken by ptrace).
    #
    # vgdb finds a process by its FIFOs, whose names carry the --vgdb-prefix,
    # the pid and the LOGNAME (else USER) and HOST the process had when it
    # started ("???" for none): a server's programs may set them (Passenger
    # gives its app processes USER=root), so each process's names are read
    # from its own FIFO's file name and vgdb runs with the same.
    #
    # A process that is gone by the time vgdb reaches it (one of Passenger's
    # short-lived spawn helpers) is no failure: it counted nothing in the
    # window, or wrote what it counted as it exited.
    class Control
      # A process answers in well under a second; one that does not within
      # this long (a machine far too busy, a valgrind that hung) fails the
      # trial rather than stalling it.
      TIMEOUT_S = 60.0
      # A FIFO's name: PREFIX-from-vgdb-to-PID-by-USER-on-HOST.
      FIFO = /-from-vgdb-to-(\d+)-by-(.*)-on-(.*)\z/
      # What vgdb and valgrind write for a name they have no variable for.
      UNKNOWN = "???"

      # :vgdb :: the vgdb executable
      # :prefix :: the --vgdb-prefix the processes run with
      # :timeout_s :: see TIMEOUT_S
      # :runner :: runs an argv (Rubies::Child.run's keywords), for tests
      # :alive :: whether a pid is still running (default: it has a /proc entry)
      def initialize(vgdb:, prefix:, timeout_s: TIMEOUT_S, runner: Rubies::Child.method(:run),
                     alive: ->(pid) { File.exist?("/proc/#{pid}") })
        @vgdb = vgdb
        @prefix = prefix
        @timeout_s = timeout_s
        @runner = runner
        @alive = alive
      end

      # Instrumentation on in every process of +pids+.
      def on(pids)
        command(pids, ["instrumentation on"])
      end

      # Instrumentation off in every process of +pids+, then their counts
      # written: callgrind.<pid>.<n> beside the others.
      def off_and_dump(pids)
        command(pids, ["instrumentation off", "dump"])
      end

      private

      # Runs +commands+ in every process of +pids+ at once. Raises Error
      # naming each process that did not take them.
      def command(pids, commands)
        failures = pids.map { |pid| Thread.new { send_to(pid, commands) } }.map(&:value).compact
        return if failures.empty?

        raise Error, "valgrind: #{failures.first}#{" (and #{failures.size - 1} more)" if failures.size > 1}"
      end

      # nil when +pid+ took +commands+ (or is gone), else why not.
      def send_to(pid, commands)
        env = names_env(pid)
        return nil if env.nil? && !@alive.call(pid)

        argv = [@vgdb, "--vgdb-prefix=#{@prefix}", "--pid=#{pid}", *commands.flat_map { |c| ["-c", c] }]
        result = @runner.call(argv, env: base_env.merge(env || {}), timeout_s: @timeout_s)
        return nil if result.success? || !@alive.call(pid)

        what = result.timed_out ? "no answer within #{@timeout_s.round} s" : last_line(result.output)
        "process #{pid} did not take '#{commands.join("; ")}' (vgdb: #{what})"
      rescue SystemCallError => e
        "cannot run vgdb: #{e.message}"
      end

      def base_env
        { "PATH" => ENV.fetch("PATH", "/usr/bin:/bin") }
      end

      # LOGNAME and HOST as +pid+'s FIFO names them (absent for "???"), or
      # nil when it has no FIFO (gone, or never reachable).
      def names_env(pid)
        fifo = Dir.glob("#{@prefix}-from-vgdb-to-#{pid}-by-*").find { |path| FIFO.match(path)&.[](1) == pid.to_s }
        return nil unless fifo

        _, user, host = FIFO.match(fifo).captures
        { "LOGNAME" => user, "HOST" => host }.reject { |_, value| value == UNKNOWN }
      end

      def last_line(output)
        output.to_s.lines.map(&:strip).reject(&:empty?).last || "exit status without output"
      end
    end
  end
end
