# frozen_string_literal: true

module Rackbench
  module Publish
    # `rackbench prune --older-than AGE`: the raw data of old runs deleted,
    # their summaries kept, so a dashboard's timelines stay whole for
    # years while the store stops growing with the engines' documents
    # (hundreds of KB a trial). A run older than the cut is summarised
    # first with every figure (Points, whatever the publishes asked), then
    # its trials and earlier attempts are deleted in one transaction with
    # the mark that it was pruned; its experiment row (labels, machine,
    # file) and its runs stay. A pruned run is drawn, compared and tracked
    # like any other by publish; `report` and `history` no longer see its
    # trials. On SQLite the file is compacted afterwards (VACUUM).
    class Retention
      # What a prune did (or would do, with dry_run).
      Outcome = Struct.new(:experiments, :trials, :earlier_attempts, :bytes_before, :bytes_after, :dry_run,
                           keyword_init: true) do
        def to_h = super.transform_keys(&:to_s)
      end

      # store :: an open Store
      def initialize(store)
        @store = store
        @db = store.db
      end

      # Prunes the runs created before +cutoff+ (a Time) that still have
      # trials; with +dry_run+, only says what it would delete.
      def prune(cutoff, dry_run: false)
        ids = @db[:experiments].where { created_at < cutoff }.select_map(:id)
        pruned = @db[:run_summaries].exclude(pruned_at: nil).select_map(:experiment_id)
        ids -= pruned
        trials = @db[:trials].where(experiment_id: ids).count
        earlier = @db[:trial_history].where(experiment_id: ids).count
        before = size
        unless dry_run || ids.empty?
          Points.new(@store, Settings.new(figures: Report::BatchFigures.names)).refresh(only: ids)
          delete(ids)
          compact
        end
        Outcome.new(experiments: ids, trials: trials, earlier_attempts: earlier, bytes_before: before,
                    bytes_after: dry_run ? before : size, dry_run: dry_run)
      end

      private

      def delete(ids)
        now = Time.now
        ids.each_slice(200) do |slice|
          @db.transaction do
            @db[:trial_history].where(experiment_id: slice).delete
            @db[:trials].where(experiment_id: slice).delete
            @db[:run_summaries].where(experiment_id: slice).update(pruned_at: now)
          end
        end
      end

      # The database's size in bytes: its file (and write-ahead log) on
      # SQLite, pg_database_size on PostgreSQL.
      def size
        if @store.postgres?
          @db.get(Sequel.function(:pg_database_size, Sequel.function(:current_database))).to_i
        else
          [@store.location, "#{@store.location}-wal"].sum { |path| File.file?(path) ? File.size(path) : 0 }
        end
      end

      def compact
        @db.run("VACUUM")
        # In WAL mode VACUUM writes the new file into the log: fold it back.
        @db.run("PRAGMA wal_checkpoint(TRUNCATE)") unless @store.postgres?
      end
    end
  end
end
