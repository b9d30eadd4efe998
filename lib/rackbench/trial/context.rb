# frozen_string_literal: true

module Rackbench
  module Trial
    # What every kind of trial of one run shares, given by the runner.
    #
    # source :: where the configurations come from: an Experiment, or a Micro::Settings
    # variants :: ruby label => Rubies::Variant, resolved
    # layout :: the Runner::CpuLayout
    # results_dir :: the run's results directory (logs/, work/, the watchdog's marker)
    # out :: where to say what takes long (a gem install starting)
    # ready_timeout_s :: how long a server may take to answer
    # stop_grace_s :: how long a process gets after TERM before KILL
    # parent_env :: the shell's environment (only what ServerEnv lets through reaches a trial)
    Context = Struct.new(:source, :variants, :layout, :results_dir, :out, :ready_timeout_s, :stop_grace_s,
                         :parent_env, keyword_init: true) do
      def logs_dir
        File.join(results_dir, "logs").tap { |dir| FileUtils.mkdir_p(dir) }
      end

      # The variables that mark every process of this run (Watchdog).
      def marker_env
        Watchdog.marker_env(results_dir)
      end
    end
  end
end
