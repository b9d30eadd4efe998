# frozen_string_literal: true

require "json"
require_relative "../../bundle_env/progress"

module Rackbench
  module Rubies
    module Build
      # What a build says while it runs, as ruby-build does: each step as it
      # starts, then, for the long ones, every interval_s, the time spent,
      # the lines the step has logged and how long it is likely still to
      # take. The estimate comes from the last build on this machine
      # (Timings: each step's duration and log length), so the first build
      # shows the time spent only.
      #
      #   Building ruby '3.4' (ruby3.4_3.4.5.orig.tar.xz), about 6m10s (log: ~/.cache/rackbench/rubies/logs/9c1e.../)
      #     [6/9] make: 612 of about 1,150 lines, 2m10s, about 1m50s left
      class Progress
        INTERVAL_S = 15.0

        # :out :: an IO
        # :timings :: the Timings of earlier builds
        # :tty :: redraw the current step's line in place (default: false)
        # :interval_s :: least time between two updates of one step (default: 15)
        def initialize(out:, timings:, tty: false, interval_s: INTERVAL_S)
          @out = out
          @timings = timings
          @tty = tty
          @interval_s = interval_s
        end

        # The whole build is starting: steps is the list of step names.
        def start(ruby:, summary:, steps:, logs:)
          @steps = steps
          total = steps.sum { |step| @timings.duration_s(step) || 0.0 }
          about = @timings.duration_s("make") ? ", about #{duration(total)}" : ""
          say "Building ruby '#{ruby}' from #{summary}#{about} (logs: #{logs})"
        end

        # Step number index (1-based) is starting.
        def step(index, name)
          @index = index
          @name = name
          estimate = @timings.duration_s(name)
          say "  [#{index}/#{@steps.size}] #{name}#{" (about #{duration(estimate)})" if estimate && estimate >= 5}"
        end

        # The current step has run elapsed_s and logged lines lines so far.
        def update(elapsed_s, lines)
          expected_lines = @timings.lines(@name)
          count = expected_lines ? "#{lines} of about #{expected_lines} lines" : "#{lines} lines"
          left_s = Progress.left_s(elapsed_s, lines, expected_lines, @timings.duration_s(@name))
          left = left_s&.positive? ? ", about #{duration(left_s)} left" : ""
          text = "  [#{@index}/#{@steps.size}] #{@name}: #{count}, #{duration(elapsed_s)}#{left}"
          @tty ? redraw(text) : say(text)
        end

        def finish(text)
          @out.print("\r\e[K") if @tty
          say "  #{text}"
        end

        attr_reader :interval_s

        # What is left of a step that has run elapsed_s and done +done+ of
        # about +expected+ units of work (a ruby's log lines, Passenger's
        # object files): once a tenth is done, at the pace this build keeps
        # (a loaded machine compiles slower than the last build did);
        # before that, the last build's duration (+expected_s+). nil when
        # nothing is known.
        def self.left_s(elapsed_s, done, expected, expected_s)
          if expected && done.positive? && done >= expected / 10.0
            elapsed_s * (expected - done) / done
          elsif expected_s
            expected_s - elapsed_s
          end
        end

        private

        def duration(seconds)
          BundleEnv::Progress.duration(seconds)
        end

        def say(text)
          @out.puts(text)
          @out.flush if @out.respond_to?(:flush)
        end

        def redraw(text)
          @out.print("\r#{text}\e[K")
          @out.flush if @out.respond_to?(:flush)
        end
      end

      # Each step's duration and log length in the last build that ran it on
      # this machine, kept in the cache's timings.json: what Progress
      # estimates from. A build on another machine, or of another ruby,
      # takes another time, so the estimate says "about".
      class Timings
        def initialize(path)
          @path = path
          @data = File.file?(path) ? JSON.parse(File.read(path)) : {}
        rescue JSON::ParserError, SystemCallError
          @data = {}
        end

        def duration_s(step)
          @data.dig(step, "duration_s")
        end

        def lines(step)
          @data.dig(step, "lines")
        end

        def known?(steps)
          steps.all? { |step| duration_s(step) }
        end

        # The last build's steps together, in seconds (what a whole build
        # takes here, roughly), or nil when no build was timed.
        def total_s
          durations = @data.values.filter_map { |entry| entry["duration_s"] if entry.is_a?(Hash) }
          durations.empty? ? nil : durations.sum
        end

        # Records one step of a finished build (written at once, so a build
        # that fails later still teaches the next one).
        def record(step, duration_s:, lines:)
          @data[step] = { "duration_s" => duration_s.round(1), "lines" => lines }
          File.write("#{@path}.tmp", JSON.pretty_generate(@data))
          File.rename("#{@path}.tmp", @path)
        rescue SystemCallError
          nil # an estimate is a nicety: a read-only cache must not fail the build
        end
      end
    end
  end
end
