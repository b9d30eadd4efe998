# frozen_string_literal: true

require "open3"
require "rbconfig"
require "shellwords"

# Runs test files in a few lanes at once, each file in a ruby process of
# its own, and prints each file's whole output when it ends (never two
# files' lines interleaved). The integration tests spend most of their
# wall time waiting on things that hardly use a CPU (a server booting, a
# Bundler resolution, a half-second load window against a tiny app), so
# two lanes on this 2-core machine cut the tier's wall time without
# changing any test: each test already tolerates a busy machine (CI shares
# it), waits on conditions with generous deadlines and uses ports and
# directories of its own.
#
# Files start longest first (the order given), each lane taking the next
# file as soon as it is free, so a long file started last cannot stretch
# the whole run.
class FileLanes
  # The outcome of one file: its path, whether it passed, its wall time and
  # its output.
  Outcome = Struct.new(:path, :passed, :duration_s, :output, keyword_init: true)

  # :files :: test files, in the order to start them
  # :lanes :: how many files run at once (>= 1)
  # :ruby_args :: arguments before each file (e.g. ["-w", "-Ilib", "-Itest"])
  # :test_args :: arguments after each file (minitest's, e.g. ["-v"]) (default: [])
  # :out :: where outputs and the summary go (default: $stdout)
  def initialize(files:, lanes:, ruby_args:, test_args: [], out: $stdout)
    raise ArgumentError, "lanes must be at least 1, got #{lanes}" unless lanes.is_a?(Integer) && lanes >= 1

    @files = files
    @lanes = lanes
    @ruby_args = ruby_args
    @test_args = test_args
    @out = out
    @print_lock = Mutex.new
  end

  # Runs every file; prints each output as its file ends, then a summary
  # with each file's time, slowest first. Returns the Outcomes.
  def run
    queue = Queue.new
    @files.each { |file| queue << file }
    queue.close
    outcomes = Array.new(@lanes) do
      Thread.new do
        done = []
        while (file = queue.pop)
          done << run_file(file).tap { |outcome| print_outcome(outcome) }
        end
        done
      end
    end.flat_map(&:value)
    print_summary(outcomes)
    outcomes
  end

  private

  def run_file(path)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    output, status = Open3.capture2e(RbConfig.ruby, *@ruby_args, path, *@test_args)
    Outcome.new(path: path, passed: status.success?, output: output,
                duration_s: Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
  end

  def print_outcome(outcome)
    @print_lock.synchronize do
      @out.puts "== #{outcome.path} (#{format("%.1f", outcome.duration_s)} s, #{outcome.passed ? "passed" : "FAILED"})"
      @out.puts outcome.output
      @out.flush
    end
  end

  def print_summary(outcomes)
    @out.puts "== #{outcomes.size} files in #{@lanes} lane(s), slowest first:"
    outcomes.sort_by { |outcome| -outcome.duration_s }.each do |outcome|
      @out.puts format("%8.1f s  %s%s", outcome.duration_s, outcome.path, outcome.passed ? "" : "  FAILED")
    end
    failed = outcomes.reject(&:passed)
    @out.puts(failed.empty? ? "== all #{outcomes.size} files passed" : "== FAILED: #{failed.map(&:path).join(" ")}")
  end
end
