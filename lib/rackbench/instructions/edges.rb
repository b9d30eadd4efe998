# frozen_string_literal: true

module Rackbench
  module Instructions
    # The window's two edges, as an instructions trial needs them. Before
    # the warmup, the server's pids go to the engine's gate (#prepare). At
    # the start, once the window is marked (the agents woken): every Ruby
    # process of the server runs a full GC (GcEdges), the pids of every
    # process under callgrind go to the engine's gate (its --quiet-pids
    # file: each request of the window waits until they all sleep), and
    # the instrumentation goes on in each. At the end: off, and each
    # process's count written; once the window is marked ended, the GC
    # counts are collected (GcEdges#ended!, InstructionsRun#add_to).
    # LoadRun calls them from the engine's phases, which a fixed count
    # holds (LoadEngine --hold-fd): no request is in flight and none is
    # sent while the processes switch, so the counts hold exactly the
    # window's requests and none of the switching.
    #
    # Called on the engine's phase thread, they never raise (the engine
    # would wait at its edge for ever): a failure is kept, the later edge
    # skipped, and the trial fails with #failure once the engine is done.
    class Edges
      # The engine's --quiet-pids file, in the trial's instructions directory.
      QUIET_PIDS_FILE = "quiet.pids"

      # Why an edge failed, or nil.
      attr_reader :failure
      # The processes switched on at the start edge (pids).
      attr_reader :started_pids
      # The GcEdges of the window (nil: no GC at the edges).
      attr_reader :gc

      # :server :: the ServerProcess (pid, pgid)
      # :control :: switches processes (a Control)
      # :proc_dir :: where /proc is (tests use a fake tree)
      # :gc :: the GcEdges that runs the agents' GC at the start (default: none)
      # :quiet_pids_file :: where the engine's gate reads the server's pids (default: none)
      def initialize(server:, control:, proc_dir: ProcessTree::PROC_DIR, gc: nil, quiet_pids_file: nil)
        @server = server
        @control = control
        @proc_dir = proc_dir
        @gc = gc
        @quiet_pids_file = quiet_pids_file
        @failure = nil
        @started = false
        @started_pids = []
      end

      # Before the warmup: the gate's pids of the server as it is (its warmup
      # pauses and waits as its window will; Window#edges calls it).
      def prepare
        write_quiet_pids(valgrind_pids)
        self
      rescue SystemCallError
        self
      end

      # The start edge: the GC in every Ruby process, the gate's pids, then
      # the instrumentation on.
      def started
        pids = valgrind_pids
        raise Error, "no process of the server runs under valgrind" if pids.empty?

        @gc&.started!(pids)
        write_quiet_pids(pids)
        @control.on(pids)
        @started_pids = pids
        @started = true
      rescue Error, SystemCallError => e
        @failure ||= e.message
      end

      # The end edge: instrumentation off and the counts dumped, in every
      # process running under callgrind now (a worker forked during the
      # window inherited its parent's instrumentation).
      def ended
        return unless @started && @failure.nil?

        @control.off_and_dump(valgrind_pids)
      rescue Error, SystemCallError => e
        @failure ||= e.message
      end

      private

      # Written whole by rename: the engine reads it when the window opens,
      # after this edge.
      def write_quiet_pids(pids)
        return unless @quiet_pids_file

        tmp = "#{@quiet_pids_file}.tmp"
        File.write(tmp, pids.map { |pid| "#{pid}\n" }.join)
        File.rename(tmp, @quiet_pids_file)
      end

      def valgrind_pids
        ProcessTree.entries(@server.pid, pgid: @server.pgid, proc_dir: @proc_dir).map(&:pid).select do |pid|
          Valgrind.tool_exe?(ProcessTree.exe(pid, proc_dir: @proc_dir))
        end
      end
    end
  end
end
