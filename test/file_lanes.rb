# frozen_string_literal: true

require "open3"
require "rbconfig"
require "shellwords"

# Runs test files in a few lanes at once, each job (one file, or a group
# of files sharing a ruby) in a ruby process of its own, and prints each
# job's whole output when it ends (never two jobs' lines interleaved).
#
# The integration tier runs one file per job: its tests spend most of
# their wall time waiting on things that hardly use a CPU (a server
# booting, a Bundler resolution, a short load window against a tiny app),
# so two lanes on a 2-core machine cut its wall time without changing any
# test: each test waits on conditions and uses ports and directories of
# its own. The unit tier runs one group of files per lane (FileTimes#groups):
# its tests compute, so two rubies use the two cores, and one ruby per
# file would spend more on loading than on testing.
#
# Jobs start in the order given (longest first: FileTimes), each lane
# taking the next as soon as it is free, so a long job started last cannot
# stretch the whole run.
class FileLanes
  # The outcome of one job: its files, whether it passed, its wall time
  # and its output. +path+ names it (the file, or the group).
  Outcome = Struct.new(:path, :files, :passed, :duration_s, :output, keyword_init: true)

  LOADER = File.expand_path("load_files.rb", __dir__)

  # :files :: test files, in the order to start them, each its own job
  # :groups :: or: Arrays of test files, each group one job in one ruby
  # :lanes :: how many jobs run at once (>= 1)
  # :ruby_args :: arguments before each file (e.g. ["-w", "-Ilib", "-Itest"])
  # :test_args :: minitest's arguments (e.g. ["-v"]) (default: [])
  # :env :: variables for every job, with {lane index} filled in (default: {})
  # :out :: where outputs and the summary go (default: $stdout)
  def initialize(lanes:, ruby_args:, files: nil, groups: nil, test_args: [], env: {}, out: $stdout)
    raise ArgumentError, "lanes must be at least 1, got #{lanes}" unless lanes.is_a?(Integer) && lanes >= 1
    raise ArgumentError, "give files or groups" unless files.nil? ^ groups.nil?

    @jobs = groups || files.map { |file| [file] }
    @grouped = !groups.nil?
    @lanes = lanes
    @ruby_args = ruby_args
    @test_args = test_args
    @env = env
    @out = out
    @print_lock = Mutex.new
  end

  # Runs every job; prints each output as its job ends, then a summary
  # with each job's time, slowest first. Returns the Outcomes.
  def run
    queue = Queue.new
    @jobs.each_with_index { |job, index| queue << [job, index] }
    queue.close
    outcomes = Array.new(@lanes) do
      Thread.new do
        done = []
        while (job, index = queue.pop)
          done << run_job(job, index).tap { |outcome| print_outcome(outcome) }
        end
        done
      end
    end.flat_map(&:value)
    print_summary(outcomes)
    outcomes
  end

  private

  def run_job(files, index)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    argv = @grouped ? [LOADER, *files, "--", *@test_args] : [files.first, *@test_args]
    env = @env.transform_values { |value| value.gsub("{lane}", index.to_s) }
    output, status = Open3.capture2e(env, RbConfig.ruby, *@ruby_args, *argv)
    Outcome.new(path: @grouped ? "group #{index + 1} (#{files.size} files)" : files.first, files: files,
                passed: status.success?, output: output,
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
    what = @grouped ? "groups" : "files"
    @out.puts "== #{outcomes.size} #{what} in #{@lanes} lane(s), slowest first:"
    outcomes.sort_by { |outcome| -outcome.duration_s }.each do |outcome|
      @out.puts format("%8.1f s  %s%s", outcome.duration_s, outcome.path, outcome.passed ? "" : "  FAILED")
    end
    failed = outcomes.reject(&:passed)
    @out.puts(failed.empty? ? "== all #{outcomes.size} #{what} passed" : "== FAILED: #{failed.map(&:path).join(" ")}")
  end
end
