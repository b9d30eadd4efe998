# frozen_string_literal: true

module Rackbench
  class Store
    # Retried failures (`rackbench run --resume --retry-failed`): +trials+
    # holds the latest attempt at each key, which every report reads; an
    # earlier attempt moves to +trial_history+, with every column, in the
    # transaction that stores the attempt after it. So a retry never loses
    # the failure it replaces, and a crash between the two leaves the
    # earlier failure where it was. Included in Store.
    module History
      # A stored failed trial: which attempt it is and its log. replace_any:
      # the attempt after it replaces it whatever its status (a batch run
      # again whole by a fleet: Fleet::Queue).
      Failed = Struct.new(:attempt, :log_path, :replace_any, keyword_init: true)

      # The experiment's failed trials, key => Failed (the attempt stored in
      # +trials+): what --retry-failed runs again.
      def failed_attempts(experiment_id)
        rows = guard("read trials") do
          db[:trials].where(experiment_id: experiment_id, status: "failed").select_map(%i[key attempt log_path])
        end
        rows.to_h { |key, attempt, log_path| [key, Failed.new(attempt: attempt, log_path: log_path)] }
      end

      # The stored trials of the experiment whose key is in +keys+, ok or
      # failed, key => Failed with replace_any: what a batch run again whole
      # replaces (a fleet's batch whose worker died, Fleet::Queue).
      def stored_attempts(experiment_id, keys)
        rows = guard("read trials") do
          db[:trials].where(experiment_id: experiment_id, key: keys.to_a).select_map(%i[key attempt log_path])
        end
        rows.to_h { |key, attempt, log_path| [key, Failed.new(attempt: attempt, log_path: log_path, replace_any: true)] }
      end

      # The earlier attempts of the experiment's trials (superseded by a
      # retry), as Trial::Records ordered by key then attempt.
      #
      # :result :: include each attempt's result document (default: true)
      def earlier_attempts(experiment_id, result: true)
        columns = RecordCodec::COLUMNS
        columns -= RecordCodec::LARGE unless result
        dataset = db[:trial_history].select(:id, *columns).where(experiment_id: experiment_id).order(:key, :attempt)
        guard("read trial history") { dataset.all }.map { |row| RecordCodec.decode(row) }
      end

      private

      # Stores +record+, attempt n > 1 at its key, in place of attempt n - 1,
      # which must be stored and failed (or of any status with
      # +replace_any+); the earlier one moves to trial_history (its log_path
      # replaced by +earlier_log_path+ when given: where its log was kept
      # before the retry overwrote it). Returns the new row's id.
      def supersede(experiment_id, record, row, earlier_log_path, replace_any)
        trials = db[:trials]
        db.transaction do
          earlier = trials.where(experiment_id: experiment_id, key: record.key).first
          unless earlier && (replace_any || earlier[:status] == "failed") && earlier[:attempt] == record.attempt - 1
            found = earlier ? "attempt #{earlier[:attempt]} (#{earlier[:status]})" : "nothing"
            raise Error, "cannot store attempt #{record.attempt} of trial #{record.key}: #{location} holds #{found}, " \
                         "expected failed attempt #{record.attempt - 1}"
          end
          moved = earlier.except(:id).merge(trial_id: earlier[:id], superseded_at: Time.now)
          moved[:log_path] = earlier_log_path if earlier_log_path
          db[:trial_history].insert(moved)
          trials.where(id: earlier[:id]).delete
          trials.insert(row)
        end
      end
    end
  end
end
