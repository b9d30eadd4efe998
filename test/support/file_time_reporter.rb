# frozen_string_literal: true

require "json"
require "minitest"

module Rackbench
  module Test
    # A minitest reporter that adds up each test file's tests' times and
    # writes them as JSON ({ file => seconds }) when the run ends: how a
    # lane of the unit tier, which runs many files in one ruby, tells the
    # Rakefile what each file took (FileTimes). On only when
    # RACKBENCH_TEST_TIMES names the file to write.
    class FileTimeReporter < Minitest::AbstractReporter
      ENV_VAR = "RACKBENCH_TEST_TIMES"

      def initialize(path)
        super()
        @path = path
        @seconds = Hash.new(0.0)
      end

      def record(result)
        @seconds[result.source_location.first] += result.time
      end

      def report
        File.write(@path, JSON.generate(@seconds))
      end
    end
  end
end

# Minitest's plugin protocol: an extension's init adds its reporter.
module Minitest
  def self.plugin_rackbench_times_init(_options)
    path = ENV.fetch(Rackbench::Test::FileTimeReporter::ENV_VAR, nil)
    reporter << Rackbench::Test::FileTimeReporter.new(path) if path
  end
end
Minitest.extensions << "rackbench_times" unless Minitest.extensions.include?("rackbench_times")
