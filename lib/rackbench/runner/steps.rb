# frozen_string_literal: true

module Rackbench
  class Runner
    # Runs, one after another, the experiments a command derives as it
    # goes (Experiment#derive: the steps of a capacity search, the stages
    # of a tuning), each into the same results directory with the ordinary
    # Runner: every step is stored under its own name and fingerprint and
    # resumes like any run (a step already stored runs nothing and returns
    # what was stored, so a command that replays its decisions from stored
    # results continues where it was interrupted). What all steps share is
    # resolved once: the ruby installations and the machine's description
    # (its warnings printed once).
    #
    #   steps = Runner::Steps.new(results_dir: "rackbench-results", out: $stdout, err: $stderr)
    #   outcome = steps.run(experiment.derive(name: "x.capacity.1", only: config, changes: { "load.rate" => 400 }))
    #   outcome.records # => [Trial::Record, ...] of that step, stored
    class Steps
      # What one step left in the store: the Runner's Summary, the stored
      # experiment's id and its Trial::Records (the latest attempt at each
      # key, results included), in the order they were stored.
      Outcome = Struct.new(:summary, :experiment_id, :records, keyword_init: true) do
        def ok_records
          records.select(&:ok?)
        end
      end

      # :results_dir :: where every step's logs are, and its results unless :store says otherwise
      # :store :: the results database, as Store.open takes it (default: the results directory)
      # :out, :err :: where progress and warnings go
      # :runner_options :: further Runner keywords for every step (fail_fast:, layout:, collaborators:,
      #                    ready_timeout_s:, watchdog:, parent_env:, ...) (default: {})
      # :installs :: Rubies::Install list (default: Rubies.discover, once)
      # :machine :: the machine's description (default: Runner.capture_machine, once, at the first step)
      def initialize(results_dir:, store: nil, out: $stdout, err: $stderr, runner_options: {}, installs: nil,
                     machine: nil)
        @results_dir = results_dir
        @store = store || results_dir
        @out = out
        @err = err
        @runner_options = runner_options
        @installs = installs
        @machine = machine
      end

      # The Runner a step would use (for its plan, variants, --dry-run);
      # +options+ are further Runner keywords for this step alone.
      def runner(experiment, **options)
        @installs ||= Rubies.discover
        Runner.new(source: experiment, results_dir: @results_dir, store: @store, resume: true, out: @out, err: @err,
                   installs: @installs, machine: @machine, **@runner_options, **options)
      end

      # Runs what is not stored yet of +experiment+ and returns its Outcome.
      # +options+ are further Runner keywords for this step (through_batch:
      # runs its first batches only). Interrupted (Ctrl-C) and every Runner
      # error pass through.
      def run(experiment, **options)
        @machine ||= Runner.capture_machine(err: @err)
        summary = runner(experiment, **options).run
        records = Store.open(@store) { |store| store.trials(summary.experiment_id) }
        Outcome.new(summary: summary, experiment_id: summary.experiment_id, records: records)
      end

      # The stored Outcome of +experiment+ without running anything, or nil
      # when the store holds no trial of it.
      def stored(experiment)
        directory = Store::Connection.scheme(@store.to_s) == :directory
        return nil if directory && !File.exist?(File.join(@store, Store::Connection::DB_FILE))

        fingerprint = runner(experiment).stored_fingerprint
        Store.open(@store) do |store|
          row = store.experiments.find { |e| e[:name] == experiment.name && e[:fingerprint] == fingerprint }
          next nil unless row

          records = store.trials(row[:id])
          next nil if records.empty?

          Outcome.new(summary: nil, experiment_id: row[:id], records: records)
        end
      end
    end
  end
end
