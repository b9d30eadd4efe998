# frozen_string_literal: true

require "json"

module Rackbench
  module Instructions
    # The runner's side of agent/instructions_gc.rb: at the window's start
    # edge, once the window is marked, it waits until every Ruby process of
    # the server has run its full GC and written <pid>.gc_start.json (only
    # then may the instrumentation go on); at the end edge, once the window
    # is marked ended, until each has written <pid>.gc_end.json; then it
    # reads the GC cycles each process ran inside the window.
    #
    # The Ruby processes are those that reported what they run at boot
    # (the identity directory's <pid>.json): a program that is no ruby
    # (Passenger's core) runs no agent and is not waited for.
    #
    # A process whose window channel has no pipe (Passenger's app
    # processes: Passenger closes inherited descriptors) waits on a FIFO of
    # its own instead of polling (agent/window.rb, RACKBENCH_WINDOW_FIFO):
    # a poll would wake it a hundred times a second inside the window, and
    # each wake would count. The runner opens every such FIFO at each edge.
    class GcEdges
      START_SUFFIX = ".gc_start.json"
      END_SUFFIX = ".gc_end.json"
      FIFO_SUFFIX = ".window.fifo"
      # A full GC under valgrind takes a second or two; a process that has
      # not written its file in this long (a server stuck, an agent that
      # did not load) fails the trial rather than stalling it.
      TIMEOUT_S = 120.0
      POLL_S = 0.02

      # The server variables that load the agent (bundle_env/launcher.rb)
      # and give a watcher without pipes its FIFO.
      SERVER_ENV = { "RACKBENCH_WINDOW" => "1", "RACKBENCH_INSTRUCTIONS_GC" => "1",
                     "RACKBENCH_WINDOW_FIFO" => "1" }.freeze

      # :window_dir :: the window channel's directory (the trial's inside/)
      # :identity_dir :: where the server's Ruby processes reported at boot
      # :timeout_s :: see TIMEOUT_S
      # :clock :: the monotonic clock in seconds, for tests
      # :sleeper :: sleeps a number of seconds, for tests
      def initialize(window_dir:, identity_dir:, timeout_s: TIMEOUT_S,
                     clock: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }, sleeper: ->(s) { sleep(s) })
        @window_dir = window_dir
        @identity_dir = identity_dir
        @timeout_s = timeout_s
        @clock = clock
        @sleeper = sleeper
        @started = []
      end

      # The processes that ran their GC at the start edge.
      attr_reader :started

      # The start edge, after the window's start was marked: every Ruby
      # process of +pids+ (the server's processes under valgrind) runs its
      # GC. Raises Error naming the processes that did not.
      def started!(pids)
        rubies = pids.select { |pid| File.file?(File.join(@identity_dir, "#{pid}.json")) }
        raise Error, "no process of the server loaded rackbench's agent (no identity report)" if rubies.empty?

        wait_for(rubies, START_SUFFIX, "its GC at the window's start")
        @started = rubies
      end

      # The end edge, after the window's end was marked: every process that
      # ran its GC at the start writes its GC counts (a process gone in the
      # meantime, a worker that exited, is left out). Raises Error naming
      # the processes that did not.
      def ended!
        alive = @started.select { |pid| File.exist?("/proc/#{pid}") || File.file?(path(pid, END_SUFFIX)) }
        wait_for(alive, END_SUFFIX, "its GC counts at the window's end")
      end

      # Per process that started: {"pid", "role", "minor", "major", "compactions", "allocated_objects",
      # "major_by"(, "missing" => true)}: the GC cycles inside the window, from the counts the agent
      # read at both edges (after its own full GC at the start).
      def readings
        @started.map do |pid|
          start = read(pid, START_SUFFIX)
          finish = read(pid, END_SUFFIX)
          next { "pid" => pid, "missing" => true } unless start && finish

          cycles(pid, start, finish)
        end
      end

      private

      def cycles(pid, start, finish)
        before = start["gc"] || {}
        after = finish["gc"] || {}
        delta = ->(key) { before[key].is_a?(Integer) && after[key].is_a?(Integer) ? after[key] - before[key] : nil }
        major = delta.call("major_gc_count")
        { "pid" => pid, "role" => start["role"], "minor" => delta.call("minor_gc_count"), "major" => major,
          "compactions" => delta.call("compact_count"), "allocated_objects" => delta.call("total_allocated_objects"),
          # Why the last major GC of the window ran (oldmalloc, nofree, oldgen, shady, force): nil without one.
          "major_by" => major.to_i.positive? ? finish.dig("latest", "major_by") : nil }
      end

      # Opens every watcher's FIFO once, then waits for +pids+' files.
      def wait_for(pids, suffix, what)
        deadline = @clock.call + @timeout_s
        poked = {}
        loop do
          poke_fifos(poked)
          missing = pids.reject { |pid| File.file?(path(pid, suffix)) }
          return if missing.empty?

          if @clock.call > deadline
            raise Error, "process#{"es" if missing.size > 1} #{missing.join(", ")} did not run #{what} within " \
                         "#{@timeout_s.round} s (agent/instructions_gc.rb)"
          end
          @sleeper.call(POLL_S)
        end
      end

      # A watcher blocked opening its FIFO for reading wakes when the
      # runner opens it for writing; a FIFO nobody reads yet (the watcher
      # is not blocked on it yet) is tried again on the next pass. Each
      # FIFO once per edge: a watcher woken again would only wait again.
      def poke_fifos(poked)
        Dir.glob(File.join(@window_dir, "*#{FIFO_SUFFIX}")).each do |fifo|
          next if poked[fifo]

          File.open(fifo, File::WRONLY | File::NONBLOCK, &:close)
          poked[fifo] = true
        rescue Errno::ENXIO, Errno::ENOENT
          nil
        end
      end

      def path(pid, suffix)
        File.join(@window_dir, "#{pid}#{suffix}")
      end

      def read(pid, suffix)
        JSON.parse(File.read(path(pid, suffix)))
      rescue SystemCallError, JSON::ParserError
        nil
      end
    end
  end
end
