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
        # The descriptors in the server of the two edges' pipes (start, end),
        # and the variable that names them to agent/window.rb.
        EDGE_FDS = { start: 7, end: 8 }.freeze
        FDS_VAR = "RACKBENCH_WINDOW_FDS"

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
        # or stand for its counts. Opens the edges' pipes for the next server.
        def reset!
          FileUtils.rm_rf(@dir)
          FileUtils.mkdir_p(@dir)
          close
          @marked = {}
          @pipes = EDGE_FDS.keys.to_h { |edge| [edge, IO.pipe] }
        end

        # What the server's spawn passes: the read end of each edge's pipe at
        # its EDGE_FDS number. Every server process inherits them (a fork
        # keeps its parent's descriptors), and its watcher blocks reading
        # them, off the GVL and with no wakeup at all, until the runner
        # closes the write end at the edge: every reader sees the end of
        # file at once, and a process forked later sees it at once too.
        # This is what keeps the agent's cost under 1% (doc/performance.md):
        # a 10 ms poll woke a busy server 100 times a second for the GVL.
        # The mark files stay, and the watcher falls back to polling them
        # where the descriptors did not reach it.
        def spawn_fds
          return {} unless @pipes

          EDGE_FDS.to_h { |edge, fd| [fd, @pipes[edge][0]] }
        end

        # The server's variables that name the descriptors.
        def env
          @pipes ? { FDS_VAR => EDGE_FDS.values_at(:start, :end).join(",") } : {}
        end

        # After the spawn: the runner keeps only the write ends.
        def spawned!
          @pipes&.each_value { |(reader, _)| reader.close unless reader.closed? }
        end

        # Closes every end still open (after the server stopped).
        def close
          @pipes&.each_value { |ios| ios.each { |io| io.close unless io.closed? } }
        end

        # Marks the window's start (edge :start) or end (:end) with this
        # process's CLOCK_MONOTONIC in seconds, written whole by rename so a
        # watcher never sees a half-written mark. Returns the clock reading.
        # Each edge is marked once per boot: a part that needs the mark
        # before its own work at the edge marks it itself, and the window
        # companion's mark after it returns the first reading.
        def mark(edge)
          name = { start: START_FILE, end: END_FILE }.fetch(edge)
          @marked ||= {}
          return @marked[edge] if @marked.key?(edge)

          at_s = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          FileUtils.mkdir_p(@dir)
          path = File.join(@dir, name)
          tmp = "#{path}.tmp"
          File.write(tmp, format("%.6f\n", at_s))
          File.rename(tmp, path)
          # The file first: a watcher woken by the end of file finds it.
          writer = @pipes && @pipes[edge][1]
          writer.close if writer && !writer.closed?
          @marked[edge] = at_s
        end

        def marked?(edge)
          File.exist?(File.join(@dir, { start: START_FILE, end: END_FILE }.fetch(edge)))
        end
      end
    end
  end
end
