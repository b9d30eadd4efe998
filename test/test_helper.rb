# frozen_string_literal: true

$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "rackbench"
require "minitest/autorun"
require "tmpdir"
require "support/cli"
require "support/live_process"
require "support/file_time_reporter"

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
