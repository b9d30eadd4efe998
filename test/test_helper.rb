# frozen_string_literal: true

$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "rackbench"
require "minitest/autorun"
require "tmpdir"
require "support/cli"
require "support/live_process"
require "support/file_time_reporter"
require "support/no_process_reporter"
require "support/cpu_time_reporter"
require "support/store_template"

module Rackbench
  module TestHelpers
    # Waits for a condition with a deadline instead of sleeping a fixed time.
    def wait_until(timeout_s: 5.0, interval_s: 0.01, message: "condition")
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
      loop do
        result = yield
        return result if result
        flunk "timed out after #{timeout_s}s waiting for #{message}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep interval_s
      end
    end

    # How much slower than the CPU it used a short spin of this process ran
    # just now: about 1 on an idle machine, about 18 at load average 28 on
    # 2 CPUs. A deadline that only guards against a hang (never a claim)
    # is scaled by it, so that a busy machine cannot outrun it, as the
    # session check's deadline follows the app's own first answer.
    def busy_factor(spin_cpu_s: 0.1)
      cpu = -> { Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) }
      wall = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }
      cpu_start = cpu.call
      wall_start = wall.call
      nil while cpu.call - cpu_start < spin_cpu_s
      [(wall.call - wall_start) / (cpu.call - cpu_start), 1.0].max
    end

    # Waits for a condition that a running process (+pid+, a child of this
    # one) brings about, as long as it runs: fails at once, naming how it
    # ended, should it end first; +timeout_s+ guards against a hang only.
    def wait_while_running(pid, timeout_s:, message:, interval_s: 0.2)
      wait_until(timeout_s: timeout_s, interval_s: interval_s, message: message) do
        found = yield
        next found if found

        ended = Process.wait2(pid, Process::WNOHANG)
        flunk "the process ended (#{ended.last}) before #{message}" if ended
        false
      end
    end

    def engine_binary
      Rackbench::LoadEngine.default_binary
    end

    # Integration tests fail, never skip, without the engine: a skipped
    # suite would look green in CI.
    def require_engine!
      flunk "load engine not built at #{engine_binary}: run bin/setup" unless File.executable?(engine_binary)
    end
  end
end

Minitest::Test.include Rackbench::TestHelpers, Rackbench::Test::Cli, Rackbench::Test::LiveProcess
# A file that runs its experiment once for all its tests does it in a
# class method of its describe block (memoized: `def self.outcome`), or in
# a module of its own: both run the command the same one way.
Minitest::Test.extend Rackbench::TestHelpers, Rackbench::Test::Cli
