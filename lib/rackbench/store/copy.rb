# frozen_string_literal: true

module Rackbench
  class Store
    # `rackbench store copy FROM TO`: every experiment of one store into
    # another (a results directory's SQLite file into PostgreSQL, usually),
    # with its runs, trials and their earlier attempts, row for row: every
    # column as it was stored, the trials in the order they were stored, so
    # every report of the copy reads the same figures. Both stores are at
    # this rackbench's schema first (Store.open upgrades them).
    #
    # Copying again copies only what is new: an experiment the target
    # holds already (the same name and fingerprint) gets the trials and
    # earlier attempts whose key (and attempt) it lacks, and no run twice.
    # Each experiment is copied in one transaction of the target: an
    # interrupted copy leaves whole experiments.
    #
    #   Store.open("rackbench-results") do |from|
    #     Store.open("postgres://bench@db/rackbench") { |to| Store::Copy.new(from, to).run }
    #   end
    class Copy
      # What one experiment's copy did.
      Copied = Struct.new(:name, :id, :trials, :earlier_attempts, :runs, :new_experiment, keyword_init: true)

      def initialize(from, to)
        @from = from
        @to = to
      end

      # Copies every experiment; returns a Copied per experiment, in the
      # source's order.
      def run
        @from.experiments.map { |experiment| copy_experiment(experiment[:id]) }
      end

      private

      def copy_experiment(source_id)
        row = @from.db[:experiments].where(id: source_id).first
        target = @to.db
        target.transaction do
          existing = target[:experiments].where(name: row[:name], fingerprint: row[:fingerprint]).get(:id)
          id = existing || target[:experiments].insert(row.except(:id))
          Copied.new(name: row[:name], id: id, new_experiment: existing.nil?, runs: copy_runs(source_id, id),
                     trials: copy_rows(:trials, source_id, id, %i[key]),
                     earlier_attempts: copy_rows(:trial_history, source_id, id, %i[key attempt]))
        end
      end

      # The rows of +table+ the target's experiment lacks (by +identity+
      # columns), in the order they were stored. Rows are read and written a
      # few at a time: a trial's result document may be hundreds of KB.
      def copy_rows(table, source_id, target_id, identity)
        have = @to.db[table].where(experiment_id: target_id).select_map(identity).to_set
        ids = @from.db[table].where(experiment_id: source_id).order(:id).select_map(:id)
        copied = 0
        ids.each_slice(BATCH_ROWS) do |slice|
          rows = @from.db[table].where(id: slice).order(:id).all.reject { |r| have.include?(r.values_at(*identity)) }
          rows.each { |r| @to.db[table].insert(r.except(:id).merge(experiment_id: target_id)) }
          copied += rows.size
        end
        copied
      end

      # Runs are copied with a new experiment only, or when the target has
      # none started at that time (they have no key of their own).
      def copy_runs(source_id, target_id)
        started = @to.db[:runs].where(experiment_id: target_id).select_map(:started_at).to_set
        rows = @from.db[:runs].where(experiment_id: source_id).order(:id).all.reject { |r| started.include?(r[:started_at]) }
        rows.each { |r| @to.db[:runs].insert(r.except(:id).merge(experiment_id: target_id)) }
        rows.size
      end

      BATCH_ROWS = 50
      private_constant :BATCH_ROWS
    end
  end
end
