# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Trial
    class Http < Kind
      # The runner's side of the window channel (agent/window.rb): the
      # directory inside/ of the trial's directory, where the runner marks
      # the load engine's measured window (window.start, window.end) for
      # every server process's watcher, and where the processes' listeners
      # leave their files (<pid>.counts.json, ...).
      class WindowMarks
        DIRECTORY = "inside"
        START_FILE = "window.start"
        END_FILE = "window.end"
        # Tells the launcher to load agent/window.rb into the server.
        ENV_VAR = "RACKBENCH_WINDOW"

        # The channel's directory of the trial whose directory is trial_dir.
        def self.directory(trial_dir)
          File.join(trial_dir, DIRECTORY)
        end

        attr_reader :dir

        def initialize(trial_dir)
          @dir = self.class.directory(trial_dir)
        end

        # Empties the channel before a server boots: marks or files left by
        # an earlier attempt (a resumed run) must not start this one's window
        # or stand for its counts.
        def reset!
          FileUtils.rm_rf(@dir)
          FileUtils.mkdir_p(@dir)
        end

        # Marks the window's start (edge :start) or end (:end) with this
        # process's CLOCK_MONOTONIC in seconds, written whole by rename so a
        # watcher never sees a half-written mark. Returns the clock reading.
        def mark(edge)
          name = { start: START_FILE, end: END_FILE }.fetch(edge)
          at_s = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          FileUtils.mkdir_p(@dir)
          path = File.join(@dir, name)
          tmp = "#{path}.tmp"
          File.write(tmp, format("%.6f\n", at_s))
          File.rename(tmp, path)
          at_s
        end

        def marked?(edge)
          File.exist?(File.join(@dir, { start: START_FILE, end: END_FILE }.fetch(edge)))
        end
      end
    end
  end
end
