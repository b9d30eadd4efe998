# frozen_string_literal: true

require "minitest"

module Rackbench
  module Test
    # The unit tier's promise, checked: no test starts a process. How it
    # knows without wrapping Process.spawn: the kernel adds the page faults
    # of every child this process reaps to its own count of children's
    # minor faults (/proc/self/stat's cminflt), and any child, even `true`,
    # faults in hundreds of pages. A test after which that count grew
    # started one; the run then fails, naming it. On only when
    # RACKBENCH_TEST_TIER is "unit" (the Rakefile's unit tier).
    class NoProcessReporter < Minitest::AbstractReporter
      ENV_VAR = "RACKBENCH_TEST_TIER"
      # cminflt is field 11 of proc(5), the 9th after the command's closing
      # parenthesis.
      CMINFLT_FIELD = 8

      def initialize(io)
        super()
        @io = io
        @offenders = []
      end

      def prerecord(_klass, _name)
        @before = children_faults
      end

      def record(result)
        @offenders << "#{result.klass}##{result.name} (#{result.source_location.join(":")})" if children_faults > @before
      end

      def passed?
        @offenders.empty?
      end

      def report
        return if passed?

        @io.puts "", "The unit tier starts no process (doc/architecture.md, Tests), but these tests did: " \
                     "move them to test/integration/", *@offenders.map { |name| "  #{name}" }
      end

      private

      def children_faults
        Integer(File.read("/proc/self/stat").rpartition(")").last.split[CMINFLT_FIELD])
      end
    end
  end
end

# Minitest's plugin protocol: an extension's init adds its reporter.
module Minitest
  def self.plugin_rackbench_no_process_init(options)
    return unless ENV[Rackbench::Test::NoProcessReporter::ENV_VAR] == "unit"

    reporter << Rackbench::Test::NoProcessReporter.new(options.fetch(:io, $stdout))
  end
end
Minitest.extensions << "rackbench_no_process" unless Minitest.extensions.include?("rackbench_no_process")
