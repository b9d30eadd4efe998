# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The HTTP kind's side of `measure: instructions` (Trial::Http
      # includes it): which trials run under valgrind, the valgrind they
      # run under, and the refusal, before the run, of a ruby variant
      # valgrind cannot run (Instructions::Support).
      module InstructionsTrials
        private

        # Whether +trial+ runs under valgrind (a plan trial without a measure: no).
        def instructions?(trial)
          trial.respond_to?(:instructions?) && trial.instructions?
        end

        # An instructions trial's InstructionsRun, nil for a time trial.
        def instructions_run(trial)
          return nil unless instructions?(trial)

          InstructionsRun.new(trial_dir: work_dir(trial), valgrind: valgrind, gc_entries: gc_entries(trial))
        end

        # A stripped ruby's collector functions (Instructions::GcProbe), nil
        # for a ruby that names them; probed once per ruby and kept in the
        # rackbench cache.
        def gc_entries(trial)
          variant = @context.variants.fetch(trial.config.ruby.label)
          valgrind_support.gc_entries(variant, env: Rubies::CleanEnv.clean(@context.parent_env).merge(variant.env).compact)
        end

        def valgrind_support
          @valgrind_support ||= Instructions::Support.new(valgrind: valgrind, cache_dir: valgrind_cache_dir)
        end

        def valgrind
          @valgrind ||= Instructions::Valgrind.find(path: @context.parent_env.fetch("PATH", ""))
        end

        # Why valgrind cannot run +variant+, when the experiment counts
        # instructions; nil otherwise.
        def valgrind_reason(variant)
          return nil unless source.respond_to?(:instructions?) && source.instructions?

          env = Rubies::CleanEnv.clean(@context.parent_env).merge(variant.env).compact
          valgrind_support.reason(variant, env: env)
        end

        # Where the answers of valgrind's probes are kept: beside the bundles
        # in the rackbench cache (RACKBENCH_CACHE, else ~/.cache/rackbench).
        def valgrind_cache_dir
          env = @context.parent_env
          root = env["RACKBENCH_CACHE"] || File.join(env["XDG_CACHE_HOME"] || File.join(Dir.home, ".cache"), "rackbench")
          File.join(root, "valgrind")
        end

        # The calibration's server counts what its requests cost under
        # instrumentation, as the window's will: switched on before it is
        # loaded.
        def switch_on(counting, server)
          edges = counting.edges(server, window: false)
          edges.started
          raise SetupError, "calibration: #{edges.failure}" if edges.failure
        end
      end

      include InstructionsTrials
    end
  end
end
