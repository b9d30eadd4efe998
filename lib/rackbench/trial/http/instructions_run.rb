# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Trial
    class Http < Kind
      # What an instructions trial (Plan::Trial#instructions?) adds to an
      # HTTP trial: its server started under callgrind (#wrapper, with
      # instrumentation off), a readiness deadline that allows for
      # valgrind's slower boot, the window's edges that switch every server
      # process's instrumentation on and off (#edges, Instructions::Edges),
      # and the counts read into the record's +instructions+ document
      # (#add_to, Instructions::Collection). Its files (callgrind's dumps and
      # logs, vgdb's FIFOs) are in the trial's directory, instructions/.
      #
      # The server runs no agent of rackbench's beyond the identity report
      # it writes at boot: no watcher thread, nothing that counts; what runs
      # under valgrind is the server (Http#server_env).
      class InstructionsRun
        DIRECTORY = "instructions"
        # Under valgrind with instrumentation off a Ruby server boots 3 to 5
        # times slower here (doc/performance.md): its deadline is this many
        # times a native server's, leaving room on a loaded machine. Only
        # instructions trials get it: a native server that hangs is still
        # found out as soon.
        READY_FACTOR = 10

        attr_reader :dir

        # :trial_dir :: the trial's directory
        # :valgrind :: the Instructions::Valgrind to run under
        # :gc_entries :: a stripped ruby's collector functions (Instructions::GcProbe)
        def initialize(trial_dir:, valgrind:, gc_entries: nil)
          @dir = File.join(trial_dir, DIRECTORY)
          @valgrind = valgrind
          @window = Instructions::Window.new(dir: @dir, window_dir: WindowMarks.directory(trial_dir),
                                             identity_dir: Identity.directory(trial_dir), valgrind: valgrind,
                                             gc_entries: gc_entries)
        end

        # Empties the directory before a server boots: counts of an
        # earlier attempt (a resumed run), or of the calibration's server,
        # must not stand for this one's.
        def prepare!
          FileUtils.rm_rf(@dir)
          FileUtils.mkdir_p(@dir)
          self
        end

        # The argv prefix the server's command runs under.
        def wrapper
          @valgrind.wrapper(@dir)
        end

        # The readiness deadline for a server whose native one is +ready_timeout_s+.
        def ready_timeout_s(ready_timeout_s)
          ready_timeout_s * READY_FACTOR
        end

        # The window's edges on +server+ (an Instructions::Edges); +window+
        # false for a calibration's server, which has none.
        def edges(server, window: true)
          @window.edges(server, window: window)
        end

        # The measurement's fields (LoadRun#run's) with the instructions
        # document, or failed with why the counts could not be taken.
        # +edges+ :: the Edges the window ran with
        # +booted+ :: the ServerLaunch::Booted (its identity, its main pid)
        def add_to(measured, edges, booted)
          return measured.merge(status: "failed", reason: "instructions: #{edges.failure}") if edges.failure
          return measured unless measured[:status] == "ok"

          document = @window.document(edges: edges, result: measured[:result], identity: booted.identity,
                                      main_pid: booted.server.pid)
          measured.merge(instructions: document)
        rescue Instructions::Error => e
          measured.merge(status: "failed", reason: "instructions: #{e.message}")
        end
      end
    end
  end
end
