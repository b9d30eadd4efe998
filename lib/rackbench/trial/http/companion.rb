# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # What runs beside an HTTP trial's server: a sampler of its processes,
      # what else the machine does, a proxy in front of it, the app's
      # services, the agent counting inside it, valgrind's edges, a
      # profiler, the window's marks, the TLS check. Each is one file under
      # trial/http/companions/ that registers itself (as servers do):
      #
      #   class Psi < Companion
      #     ORDER = 35
      #     def part(scene) = Part.new(...)
      #   end
      #   Http.companion :psi, Psi
      #
      # A companion lives for the run (one per Trial::Http): it may check the
      # machine before anything is stored, keep something for the whole run,
      # or leave a configuration out of the plan. For each trial it joins, it
      # gives a Part (#part), whose hooks the trial calls in this order:
      #
      #   env, launch_prefix, ready_timeout_s   the server's start
      #   before_boot                           before each server of the trial boots (the calibration's too)
      #   keeps_app_state?, before_spawn        after the app's hooks, before the server starts (ServerLaunch)
      #   prove(server, identity)               once its identity is checked (ServerLaunch)
      #   calibration_load(server)              before the calibration's load, on its own server
      #   after_boot(booted)                    the trial's server passed every check
      #   engine_settings(hash), target_port    the load engine's settings and where it sends the load
      #   window_started, window_ended          the engine's measured window (its phase thread)
      #   keep(facts)                           what the record keeps once the window ended, whatever follows
      #   failure(when_text)                    why the measurement cannot count (a sidecar that died)
      #   document(outcome)                     the record's fields it adds, before the server stops
      #   stop(facts)                           before the server stops
      #   finish(facts)                         the trial is over, however it ended
      #
      # The parts of one trial are called in their companions' ORDER (then
      # by name): at each window edge the switches first (valgrind's
      # instrumentation), then the marks the server's processes watch, then
      # the samplers. A part whose work at the start needs the processes
      # woken first (the instructions part: its agents' GC runs before the
      # switch) marks the start itself; WindowMarks marks an edge once.
      # LoadRun and Trial::Http iterate over parts and never name one.
      class Companion
        # Before the marks (20) and the samplers (30 and up): a fixed
        # count's engine holds its edge until every switch is done.
        ORDER = 50

        # What every companion of a run is built with: the run's
        # Trial::Context and the guard prefix every process it starts runs
        # behind (Kind#guard).
        Setup = Struct.new(:context, :guard, keyword_init: true) do
          def source = context.source
        end

        # What a part knows about its trial: the plan's trial and its
        # configuration, the resolved App, ruby variant and server adapter,
        # the trial's directory, its WindowMarks, the run's TLS certificate
        # for a load.tls trial (nil otherwise), and whether the trial is
        # only examined (`rackbench check`: booted and calibrated as its
        # first trial would be, under no valgrind, never measured).
        Scene = Struct.new(:trial, :app, :variant, :adapter, :work_dir, :window, :tls, :examining,
                           keyword_init: true) do
          def config = trial.config

          # Whether the trial runs under valgrind (Plan::Trial#instructions?).
          def instructions?
            trial.respond_to?(:instructions?) && trial.instructions?
          end

          def profiled?
            trial.respond_to?(:profiled?) && trial.profiled?
          end
        end

        attr_reader :setup

        def initialize(setup)
          @setup = setup
        end

        def self.order
          self::ORDER
        end

        # Raises ConfigError before anything is stored when the run cannot
        # have this companion (a service's program missing).
        def check!; end

        # Runs the block (the run's trials) with what this companion keeps
        # for the whole run (the services).
        def around_run
          yield
        end

        # Why config cannot run on variant with this companion, or nil: the
        # plan leaves it out up front.
        def unsupported_reason(_config, _variant) = nil

        # What shares the server's CPUs for the run's layout line ("the
        # proxy"), or nil.
        def beside_server = nil

        # Variables this companion may set in some trial's server: every
        # trial's identity check verifies its own value of each, so a trial
        # without it proves it runs without.
        def watched_env = []

        # Gemfile lines every bundle of the run needs (a profiler's gem).
        def gem_lines = []

        # The Part this companion plays in the trial of scene (a Scene), or
        # nil when it has none there.
        def part(_scene) = nil

        # A companion's part in one trial: every hook does nothing unless
        # the companion says otherwise.
        class Part
          # The server's variables, by ServerEnv layer: { "trial" => {...} }
          # (rackbench's own markers) or { "services" => {...} }.
          def env = {}

          # An argv prefix the server's command runs under (valgrind).
          def launch_prefix = []

          # The readiness deadline, from the native one.
          def ready_timeout_s(native_s) = native_s

          # Before each server of the trial boots: files of an earlier boot
          # must not stand for this one's.
          def before_boot; end

          # Whether what the app's setup makes is kept apart and put back
          # before every boot (a service's template): the setup then runs
          # once, not before every trial.
          def keeps_app_state? = false

          # After the app's hooks and setup, before the server starts.
          def before_spawn; end

          # Once the server's processes proved their identity: a further
          # check of the booted server, whose findings join the identity
          # record (identity is that Hash). Raises SetupError.
          def prove(_server, _port, _identity); end

          # The calibration's load is about to start on its own server.
          def calibration_load(_server); end

          # The trial's server passed every check (a ServerLaunch::Booted).
          def after_boot(_booted); end

          # The load engine's settings before they are built: a Hash of
          # LoadSettings' keywords, think_s, warmup_count (nil: left open)
          # and seed (the batch's). A part may set a default the
          # configuration left open, or a keyword of its own (an
          # instructions trial's gate, quiet_pids_file).
          def engine_settings(settings) = settings

          # The record's load_settings: what the trial says it ran with.
          def record_settings(settings) = settings

          # The port the load goes to instead of the server's, or nil.
          def target_port = nil

          # The engine's window starts / ends. Called on the engine's phase
          # thread: a part never raises here (the engine would wait at its
          # edge), it keeps its failure for #failure or leaves its figure out.
          def window_started; end
          def window_ended; end

          # What the record keeps of the window, whatever happens after it.
          def keep(_facts); end

          # Why the measurement cannot count, or nil.
          def failure(_when_text) = nil

          # The outcome (the record's fields of the measurement) with this
          # part's document, or failed with its reason.
          def document(outcome) = outcome

          # Stops what the part started, before the server stops; facts
          # gets its document.
          def stop(_facts); end

          # The trial is over, however it ended.
          def finish(_facts); end
        end
      end

      @companions = {}

      class << self
        # Registers klass (a Companion subclass) under name.
        def companion(name, klass)
          @companions[name.to_sym] = klass
        end

        # name => factory (a Companion class, or anything whose #new or
        # #call takes a Companion::Setup) of every registered companion:
        # what Trial::Http runs with unless a test gives its own.
        def companions
          Companions.load_all
          @companions.dup
        end
      end
    end
  end
end
