# frozen_string_literal: true

module Rackbench
  module Instructions
    # Switches callgrind's instrumentation on and off in running processes,
    # and has them write their counts (a dump), through vgdb: one vgdb per
    # process, all at once (each takes 0.1-0.3 s, mostly waiting for a
    # process blocked in a system call to be woken by ptrace).
    #
    # vgdb finds a process by its FIFOs, whose names carry the --vgdb-prefix
    # and the USER, LOGNAME and HOST the process had: it runs with the
    # server's values of them.
    class Control
      # A process answers in well under a second; one that does not within
      # this long (a machine far too busy, a valgrind that hung) fails the
      # trial rather than stalling it.
      TIMEOUT_S = 60.0
      # What vgdb's FIFO names are built from.
      NAME_VARS = %w[USER LOGNAME HOST].freeze

      # :vgdb :: the vgdb executable
      # :prefix :: the --vgdb-prefix the processes run with
      # :server_env :: the servers' environment (Hash), for the FIFOs' names
      # :timeout_s :: see TIMEOUT_S
      # :runner :: runs an argv (Rubies::Child.run's keywords), for tests
      def initialize(vgdb:, prefix:, server_env:, timeout_s: TIMEOUT_S, runner: Rubies::Child.method(:run))
        @vgdb = vgdb
        @prefix = prefix
        @env = { "PATH" => ENV.fetch("PATH", "/usr/bin:/bin") }.merge(server_env.to_h.slice(*NAME_VARS))
        @timeout_s = timeout_s
        @runner = runner
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

      # nil when +pid+ took +commands+, else why not.
      def send_to(pid, commands)
        argv = [@vgdb, "--vgdb-prefix=#{@prefix}", "--pid=#{pid}", *commands.flat_map { |c| ["-c", c] }]
        result = @runner.call(argv, env: @env, timeout_s: @timeout_s)
        return nil if result.success?

        what = result.timed_out ? "no answer within #{@timeout_s.round} s" : last_line(result.output)
        "process #{pid} did not take '#{commands.join("; ")}' (vgdb: #{what})"
      rescue SystemCallError => e
        "cannot run vgdb: #{e.message}"
      end

      def last_line(output)
        output.to_s.lines.map(&:strip).reject(&:empty?).last || "exit status without output"
      end
    end
  end
end
