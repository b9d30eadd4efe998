# frozen_string_literal: true

module Rackbench
  module Instructions
    # What an instructions trial's window needs of the trial around it, in
    # one place (the trial calls #edges when the server has booted and
    # #document once the engine is done):
    #
    # - the server's environment (SERVER_ENV: the window channel with the
    #   GC agent, FIFOs where pipes cannot reach);
    # - the engine's gate (#quiet_pids_file: LoadSettings' quiet_pids_file);
    # - at the start edge, after the window is marked: the agents' full GC,
    #   the gate's pids, the instrumentation on (Edges#started);
    # - at the end edge: the instrumentation off and the counts written
    #   (Edges#ended), then the window marked ended;
    # - then #document: the agents' GC counts (GcEdges#ended!), the gate's
    #   report checked, callgrind's files read (Collection).
    class Window
      SERVER_ENV = GcEdges::SERVER_ENV

      # The engine's --quiet-pids file of the trial whose instructions
      # directory is +dir+.
      def self.quiet_pids_file(dir)
        File.join(dir, Edges::QUIET_PIDS_FILE)
      end

      # :dir :: the trial's instructions directory (callgrind's files)
      # :window_dir :: the trial's window channel (inside/)
      # :identity_dir :: the trial's identity reports
      # :valgrind :: the Valgrind the server runs under
      # :gc_entries :: a stripped ruby's collector functions (GcProbe#entries; default: none)
      def initialize(dir:, window_dir:, identity_dir:, valgrind:, gc_entries: nil)
        @dir = dir
        @window_dir = window_dir
        @identity_dir = identity_dir
        @valgrind = valgrind
        @gc_entries = gc_entries
      end

      # The window's Edges on +server+ (a ServerProcess). +window+ false:
      # the edges of a server that has no window (a calibration's, which
      # only switches its instrumentation on): no GC at the edge, no gate.
      def edges(server, window: true)
        control = Control.new(vgdb: @valgrind.vgdb, prefix: File.join(@dir, Valgrind::VGDB_PREFIX))
        return Edges.new(server: server, control: control) unless window

        gc = GcEdges.new(window_dir: @window_dir, identity_dir: @identity_dir)
        Edges.new(server: server, control: control, gc: gc, quiet_pids_file: self.class.quiet_pids_file(@dir)).prepare
      end

      # The record's instructions document for a window of the engine's
      # +result+ (its JSON document) counted with +edges+. Raises Error when
      # the counts cannot be trusted: a gate that could not read the pids,
      # an agent that wrote no GC counts.
      # :identity :: the trial's identity record; :main_pid :: the server's main process
      def document(edges:, result:, identity: nil, main_pid: nil)
        quiet = gate(result)
        edges.gc&.ended!
        Collection.new(dir: @dir, valgrind_version: @valgrind.version)
                  .document(requests: result["requests"], identity: identity, main_pid: main_pid,
                            started_pids: edges.started_pids, gc: edges.gc&.readings, quiet: quiet,
                            gc_entries: @gc_entries)
      end

      private

      # The engine's report of its gate: {"checks", "waits"}. A gate that
      # was asked for and did not work fails the trial: its requests may
      # have found the server busy.
      def gate(result)
        quiet = result["quiet"]
        raise Error, "the load engine did not gate the window's requests (no quiet report)" unless quiet.is_a?(Hash)
        raise Error, "the load engine's gate: #{quiet["error"]}" if quiet["error"]
        raise Error, "the load engine's gate had no server process to watch" unless quiet["pids"].to_i.positive?

        { "checks" => quiet["checks"], "waits" => quiet["waits"] }
      end
    end
  end
end
