# frozen_string_literal: true

require "json"
require "minitest"

module Rackbench
  module Test
    # A minitest reporter that measures each test's CPU seconds (this
    # process's user + system time, CLOCK_PROCESS_CPUTIME_ID) beside its
    # wall seconds, and writes them as JSON Lines when the run ends: where
    # the unit tier's time goes (bench/unit_cpu.rb adds them up per test
    # and per file). Why CPU: on a shared machine a test's wall time
    # grows with everyone else's load, its CPU time hardly does. The
    # clock covers setup and teardown (prerecord and record surround
    # both) and any thread the test starts. On only when
    # RACKBENCH_TEST_CPU names the file to write.
    class CpuTimeReporter < Minitest::AbstractReporter
      ENV_VAR = "RACKBENCH_TEST_CPU"

      def initialize(path)
        super()
        @path = path
        @rows = []
      end

      def prerecord(_klass, _name)
        @cpu_start_s = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
      end

      def record(result)
        cpu_s = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - @cpu_start_s
        @rows << { "file" => result.source_location.first, "test" => "#{result.klass}##{result.name}",
                   "wall_s" => result.time.round(4), "cpu_s" => cpu_s.round(4) }
      end

      # The whole process's CPU seconds go in a last row ("test" nil):
      # what loading the files and the library cost beyond the tests.
      def report
        total = { "file" => nil, "test" => nil, "wall_s" => nil,
                  "cpu_s" => Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID).round(4) }
        File.write(@path, (@rows + [total]).map { |row| "#{JSON.generate(row)}\n" }.join)
      end
    end
  end
end

# Minitest's plugin protocol: an extension's init adds its reporter.
module Minitest
  def self.plugin_rackbench_cpu_init(_options)
    path = ENV.fetch(Rackbench::Test::CpuTimeReporter::ENV_VAR, nil)
    reporter << Rackbench::Test::CpuTimeReporter.new(path) if path
  end
end
Minitest.extensions << "rackbench_cpu" unless Minitest.extensions.include?("rackbench_cpu")
