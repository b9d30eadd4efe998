# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # `measure: instructions` (Rackbench::Instructions): an instructions
        # trial's server runs under callgrind with instrumentation off, its
        # readiness deadline allows for valgrind's slower boot, and its
        # processes load the GC agent (agent/instructions_gc.rb) on the
        # window channel. The engine's requests, warmup and window, each
        # wait until the server sleeps (its --quiet-pids gate). At the
        # window's start every Ruby process runs a full GC, then every
        # process's instrumentation goes on; at the end it goes off and the
        # counts are written (Instructions::Window, Edges, GcEdges); they
        # are read into the record's +instructions+ document, the GC inside
        # the window apart (Instructions::Collection, GcFigure). Its files
        # (callgrind's dumps and logs, vgdb's FIFOs, the gate's pids) are in
        # the trial's directory, instructions/. A ruby variant valgrind
        # cannot run is left out of the plan before the run, and a stripped
        # ruby's collector is found by a probe once per ruby
        # (Instructions::Support, GcProbe).
        class Instructions < Companion
          # First at each edge: a fixed count's engine holds the edge until
          # every process is switched, so no request is in flight and none
          # is sent while they switch.
          ORDER = 10
          DIRECTORY = "instructions"
          # Under valgrind with instrumentation off a Ruby server boots 3 to
          # 5 times slower here (doc/performance.md): its deadline is this
          # many times a native server's, leaving room on a loaded machine.
          # Only instructions trials get it: a native server that hangs is
          # still found out as soon.
          READY_FACTOR = 10

          # :valgrind :: what instructions trials run under (default: Rackbench::Instructions::Valgrind.find)
          # :valgrind_support :: answers why a ruby variant cannot run under valgrind (#reason(variant,
          #                      env:)) and which functions are a stripped ruby's collector
          #                      (#gc_entries(variant, env:)); default: an Instructions::Support keeping
          #                      its answers in the rackbench cache
          def initialize(setup, valgrind: nil, valgrind_support: nil)
            super(setup)
            @valgrind = valgrind
            @valgrind_support = valgrind_support
          end

          # Why valgrind cannot run +variant+, when the experiment counts
          # instructions; nil otherwise.
          def unsupported_reason(_config, variant)
            source = setup.source
            return nil unless source.respond_to?(:instructions?) && source.instructions?

            valgrind_support.reason(variant, env: probe_env(variant))
          end

          def part(scene)
            return nil unless scene.instructions?

            examining = scene.examining
            Part.new(dir: File.join(scene.work_dir, DIRECTORY), valgrind: valgrind, config: scene.config,
                     examining: examining, window: scene.window, trial_dir: scene.work_dir,
                     gc_entries: examining ? nil : gc_entries(scene.variant), seed: setup.source.seed)
          end

          private

          def valgrind_support
            @valgrind_support ||= Rackbench::Instructions::Support.new(valgrind: valgrind, cache_dir: cache_dir)
          end

          # A stripped ruby's collector functions (Instructions::GcProbe),
          # nil for a ruby that names them; probed once per ruby and kept in
          # the rackbench cache.
          def gc_entries(variant)
            valgrind_support.gc_entries(variant, env: probe_env(variant))
          end

          # What a probe of +variant+ runs with: its own variables over a clean base.
          def probe_env(variant)
            Rubies::CleanEnv.clean(setup.context.parent_env).merge(variant.env).compact
          end

          # The experiment's `instructions: { cache_sim: true }` turns on
          # callgrind's cache simulation (estimated cycles).
          def valgrind
            source = setup.source
            cache_sim = source.respond_to?(:instructions_settings) && source.instructions_settings.cache_sim
            @valgrind ||= Rackbench::Instructions::Valgrind.find(path: setup.context.parent_env.fetch("PATH", ""),
                                                                 cache_sim: cache_sim)
          end

          # Where the answers of valgrind's probes are kept: beside the
          # bundles in the rackbench cache.
          def cache_dir
            File.join(CacheRoot.path(setup.context.parent_env), "valgrind")
          end

          # One instructions trial.
          class Part < Companion::Part
            # :dir :: the trial's instructions/ directory
            # :valgrind :: the Rackbench::Instructions::Valgrind to run under
            # :config :: the trial's Experiment::Config (its load)
            # :examining :: an examination (`rackbench check`) boots the server as a time trial's, under no
            #               valgrind, and shows the load its trials would run with
            # :window :: the trial's WindowMarks (the GC agents wake on its start mark)
            # :trial_dir :: the trial's directory (the agents' identity reports)
            # :gc_entries :: a stripped ruby's collector functions (Instructions::GcProbe; default: none)
            # :seed :: the experiment's seed: every batch sends the same requests of a request list
            def initialize(dir:, valgrind:, config:, examining: false, window: nil, trial_dir: nil, gc_entries: nil,
                           seed: nil)
              super()
              @dir = dir
              @valgrind = valgrind
              @load = config.load
              @examining = examining
              @marks = window
              @seed = seed
              @window = Rackbench::Instructions::Window.new(
                dir: dir, window_dir: window&.dir, identity_dir: trial_dir && Identity.directory(trial_dir),
                valgrind: valgrind, gc_entries: gc_entries
              )
            end

            # The window channel with the GC agent alone, FIFOs where the
            # channel's pipes cannot reach (Instructions::Window::SERVER_ENV).
            def env
              @examining ? {} : { "trial" => Rackbench::Instructions::Window::SERVER_ENV }
            end

            def launch_prefix
              @examining ? [] : @valgrind.wrapper(@dir)
            end

            def ready_timeout_s(native_s)
              @examining ? native_s : native_s * READY_FACTOR
            end

            # Counts of an earlier attempt (a resumed run), or of the
            # calibration's server, must not stand for this one's.
            def before_boot
              return if @examining

              FileUtils.rm_rf(@dir)
              FileUtils.mkdir_p(@dir)
            end

            # The calibration's server counts what its requests cost under
            # instrumentation, as the window's will: switched on before it
            # is loaded. It has no window: no GC at the edge, no gate.
            def calibration_load(server)
              edges = @window.edges(server, window: false)
              edges.started
              raise SetupError, "calibration: #{edges.failure}" if edges.failure
            end

            # The window's edges on the trial's server; the gate's pids are
            # written now, for the warmup (Edges#prepare).
            def after_boot(booted)
              return if @examining

              @booted = booted
              @edges = @window.edges(booted.server)
            end

            # A think time left to auto (load.think null) is
            # Experiment::Settings::INSTRUCTIONS_THINK_S. A warmup of a fixed
            # count left to auto counts as many requests as the window and
            # at least INSTRUCTIONS_MIN_WARMUP_COUNT (a timed warmup under
            # valgrind warms a JIT's server a tenth as far as the
            # interpreter's). Every batch sends the same requests of a
            # request list (the experiment's seed, not the seed plus the
            # batch): its count is then the same work in every batch. Once
            # the trial's server has booted, every request of its warmup and
            # window waits until the server sleeps (the engine's gate, its
            # pids file: Instructions::Window); the calibration's server,
            # which has no window, is not gated.
            def engine_settings(settings)
              settings = settings.merge(think_s: Experiment::Settings::INSTRUCTIONS_THINK_S) if settings[:think_s].nil?
              if settings[:warmup_count].nil? && @load[:count]
                settings = settings.merge(warmup_count: [@load[:count], Experiment::Settings::INSTRUCTIONS_MIN_WARMUP_COUNT].max)
              end
              return settings if @examining

              settings = settings.merge(seed: @seed) if @seed
              return settings unless @edges

              settings.merge(quiet_pids_file: Rackbench::Instructions::Window.quiet_pids_file(@dir))
            end

            # An instructions trial says so in its settings (Instructions.trial?).
            def record_settings(settings)
              settings.merge(Rackbench::Instructions::SETTINGS_KEY => Rackbench::Instructions::INSTRUCTIONS)
            end

            # The window's start: the GC agents wake on the window's start
            # mark and their full GC must run before the instrumentation
            # goes on (it would count in the window otherwise), so this part
            # marks the start itself, first of all (the window companion's
            # mark after it finds the edge marked: WindowMarks#mark). Then
            # Edges#started waits for every agent's GC, writes the gate's
            # pids and switches every process on.
            def window_started
              return unless @edges

              @marks.mark(:start)
              @edges.started
            rescue SystemCallError => e
              @mark_failure = "the window's start could not be marked for the GC agents: #{e.message}"
            end

            # The window's end: every process off and its counts written,
            # before the window companion marks the end (the agents' GC
            # counts at the end then run uncounted).
            def window_ended
              @edges&.ended
            end

            # The measurement's fields with the instructions document, or
            # failed with why the counts could not be taken.
            def document(outcome)
              return outcome unless @edges

              failure = @mark_failure || @edges.failure
              return outcome.merge(status: "failed", reason: "instructions: #{failure}") if failure
              return outcome unless outcome[:status] == "ok"

              document = @window.document(edges: @edges, result: outcome[:result], identity: @booted.identity,
                                          main_pid: @booted.server.pid)
              outcome.merge(instructions: document)
            rescue Rackbench::Instructions::Error => e
              outcome.merge(status: "failed", reason: "instructions: #{e.message}")
            end
          end
        end

        Http.companion :instructions, Instructions
      end
    end
  end
end
