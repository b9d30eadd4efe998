# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # `measure: instructions` (Rackbench::Instructions): an instructions
        # trial's server runs under callgrind with instrumentation off, its
        # readiness deadline allows for valgrind's slower boot, the window's
        # edges switch every server process's instrumentation on and off
        # (Instructions::Edges), and the counts are read into the record's
        # +instructions+ document (Instructions::Collection). Its files
        # (callgrind's dumps and logs, vgdb's FIFOs) are in the trial's
        # directory, instructions/. A ruby variant valgrind cannot run is
        # left out of the plan before the run (Instructions::Support).
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
          #                      env:); default: an Instructions::Support keeping its answers in the
          #                      rackbench cache)
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

            @valgrind_support ||= Rackbench::Instructions::Support.new(valgrind: valgrind, cache_dir: cache_dir)
            env = Rubies::CleanEnv.clean(setup.context.parent_env).merge(variant.env).compact
            @valgrind_support.reason(variant, env: env)
          end

          def part(scene)
            return nil unless scene.instructions?

            Part.new(dir: File.join(scene.work_dir, DIRECTORY), valgrind: valgrind, config: scene.config,
                     examining: scene.examining)
          end

          private

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
            def initialize(dir:, valgrind:, config:, examining: false)
              super()
              @dir = dir
              @valgrind = valgrind
              @load = config.load
              @examining = examining
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
            # is loaded.
            def calibration_load(server)
              edges = edges(server)
              edges.started
              raise SetupError, "calibration: #{edges.failure}" if edges.failure
            end

            def after_boot(booted)
              @booted = booted
              @edges = edges(booted.server)
            end

            # A think time left to auto (load.think null) is
            # Experiment::Settings::INSTRUCTIONS_THINK_S: every request then
            # finds the server idle and takes the same path through it,
            # however busy the machine. A warmup of a fixed count left to
            # auto counts as many requests as the window and at least
            # INSTRUCTIONS_MIN_WARMUP_COUNT (a timed warmup under valgrind
            # warms a JIT's server a tenth as far as the interpreter's).
            def engine_settings(settings)
              settings = settings.merge(think_s: Experiment::Settings::INSTRUCTIONS_THINK_S) if settings[:think_s].nil?
              return settings unless settings[:warmup_count].nil? && @load[:count]

              settings.merge(warmup_count: [@load[:count], Experiment::Settings::INSTRUCTIONS_MIN_WARMUP_COUNT].max)
            end

            # An instructions trial says so in its settings (Instructions.trial?).
            def record_settings(settings)
              settings.merge(Rackbench::Instructions::SETTINGS_KEY => Rackbench::Instructions::INSTRUCTIONS)
            end

            def window_started
              @edges&.started
            end

            def window_ended
              @edges&.ended
            end

            # The measurement's fields with the instructions document, or
            # failed with why the counts could not be taken.
            def document(outcome)
              return outcome unless @edges
              return outcome.merge(status: "failed", reason: "instructions: #{@edges.failure}") if @edges.failure
              return outcome unless outcome[:status] == "ok"

              document = Rackbench::Instructions::Collection.new(dir: @dir, valgrind_version: @valgrind.version)
                                                            .document(requests: outcome[:result]["requests"],
                                                                      identity: @booted.identity,
                                                                      main_pid: @booted.server.pid,
                                                                      started_pids: @edges.started_pids)
              outcome.merge(instructions: document)
            rescue Rackbench::Instructions::Error => e
              outcome.merge(status: "failed", reason: "instructions: #{e.message}")
            end

            private

            # The window's edges on +server+ (an Instructions::Edges).
            def edges(server)
              prefix = File.join(@dir, Rackbench::Instructions::Valgrind::VGDB_PREFIX)
              control = Rackbench::Instructions::Control.new(vgdb: @valgrind.vgdb, prefix: prefix)
              Rackbench::Instructions::Edges.new(server: server, control: control)
            end
          end
        end

        Http.companion :instructions, Instructions
      end
    end
  end
end
