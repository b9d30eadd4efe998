# frozen_string_literal: true

require "rbconfig"

module Rackbench
  module Test
    # The stress lane (RACKBENCH_TEST_STRESS=N): N busy loops beside the
    # suite, each a ruby spinning on a CPU, so that every test meets a
    # machine at least as busy as a shared CI host. A test that passes
    # quiet and fails here depends on the machine's speed: a bug to fix
    # by waiting on a condition (doc/performance.md, "Whole suite").
    #
    # Why ruby and not stress-ng: the suite needs nothing Debian's
    # packages would have to add, and a spinning interpreter loads the CPU
    # the same way (one runnable thread each, no I/O, no memory traffic
    # to speak of).
    #
    # No loop outlives the suite: each runs under rackbench-guard, whose
    # parent-death signal ends it when the process that started it dies,
    # even by SIGKILL; #stop ends them on every ordinary way out (the
    # Rakefile calls it from an ensure and from at_exit).
    class StressLane
      ENV_VAR = "RACKBENCH_TEST_STRESS"
      GUARD = File.expand_path("../../lib/rackbench-guard", __dir__)
      SPIN = "loop { }"
      STOP_GRACE_S = 5.0

      # The N of RACKBENCH_TEST_STRESS (0: no stress lane). Raises
      # ArgumentError on anything but a whole number from 0 to 64.
      def self.count(env = ENV)
        text = env.fetch(ENV_VAR, "0").strip
        count = Integer(text.empty? ? "0" : text, 10)
        raise ArgumentError unless count.between?(0, 64)

        count
      rescue ArgumentError
        raise ArgumentError, "#{ENV_VAR} must be a number of busy loops from 0 to 64, got #{env[ENV_VAR].inspect}"
      end

      attr_reader :pids

      # :count :: how many loops
      def initialize(count)
        @count = count
        @pids = []
      end

      # Starts the loops; returns self. Raises when the guard is not built.
      def start
        return self if @count.zero?
        raise "#{GUARD} is not built: run `rake compile` first" unless File.executable?(GUARD)

        @pids = Array.new(@count) do
          Process.spawn(GUARD, Process.pid.to_s, RbConfig.ruby, "-e", SPIN, in: File::NULL, out: File::NULL,
                                                                            err: File::NULL)
        end
        self
      end

      # Stops every loop (TERM, then KILL past the grace) and reaps it.
      # Safe to call more than once.
      def stop
        pids = @pids
        @pids = []
        pids.each { |pid| signal(:TERM, pid) }
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + STOP_GRACE_S
        pids.each do |pid|
          sleep 0.01 until reaped?(pid) || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
          next if reaped?(pid)

          signal(:KILL, pid)
          Process.wait(pid)
        rescue Errno::ECHILD
          nil
        end
      end

      # "2 busy loops (pids 1, 2)", for the suite's first lines.
      def to_s
        "#{@count} busy loop#{"s" unless @count == 1} beside the suite (pids #{@pids.join(", ")})"
      end

      private

      def signal(name, pid)
        Process.kill(name, pid)
      rescue Errno::ESRCH
        nil
      end

      def reaped?(pid)
        !Process.wait(pid, Process::WNOHANG).nil?
      rescue Errno::ECHILD
        true
      end
    end
  end
end
