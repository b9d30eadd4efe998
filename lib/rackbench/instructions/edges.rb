# frozen_string_literal: true

module Rackbench
  module Instructions
    # The window's two edges, as an instructions trial needs them: at the
    # start, instrumentation on in every process of the server that runs
    # under callgrind; at the end, off, and each process's count written.
    # LoadRun calls them from the engine's phases, which a fixed count holds
    # (LoadEngine --hold-fd): no request is in flight and none is sent while
    # the processes switch, so the counts hold exactly the window's
    # requests and none of the switching.
    #
    # Called on the engine's phase thread, they never raise (the engine
    # would wait at its edge for ever): a failure is kept, the later edge
    # skipped, and the trial fails with #failure once the engine is done.
    class Edges
      # Why an edge failed, or nil.
      attr_reader :failure
      # The processes switched on at the start edge (pids).
      attr_reader :started_pids

      # :server :: the ServerProcess (pid, pgid)
      # :control :: switches processes (a Control)
      # :proc_dir :: where /proc is (tests use a fake tree)
      def initialize(server:, control:, proc_dir: ProcessTree::PROC_DIR)
        @server = server
        @control = control
        @proc_dir = proc_dir
        @failure = nil
        @started = false
        @started_pids = []
      end

      # The start edge: instrumentation on.
      def started
        pids = valgrind_pids
        raise Error, "no process of the server runs under valgrind" if pids.empty?

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

      def valgrind_pids
        ProcessTree.entries(@server.pid, pgid: @server.pgid, proc_dir: @proc_dir).map(&:pid).select do |pid|
          Valgrind.tool_exe?(ProcessTree.exe(pid, proc_dir: @proc_dir))
        end
      end
    end
  end
end
