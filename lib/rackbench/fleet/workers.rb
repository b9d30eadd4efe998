# frozen_string_literal: true

require "json"

module Rackbench
  module Fleet
    # The fleet_workers table: each `rackbench worker` while it runs, its
    # heartbeat, and the experiments it refused to claim and why (its
    # checks before a claim: an app path or a ruby this host lacks), which
    # `run --fleet` shows while it follows the queue.
    class Workers
      RUNNING = "running"
      STOPPED = "stopped"

      # :store :: an open Store
      def initialize(store)
        @db = store.db
      end

      # Records a worker starting; returns its id.
      # document :: what it says of itself ("machine": MachineEnv summary)
      def register(name:, testbed:, document: {})
        @db[:fleet_workers].insert(name: name, testbed: testbed, pid: Process.pid, rackbench_version: VERSION,
                                   status: RUNNING, started_at: Sequel::CURRENT_TIMESTAMP,
                                   heartbeat_at: Sequel::CURRENT_TIMESTAMP,
                                   document: JSON.generate(document.merge("refused" => {})))
      end

      def beat(worker_id)
        @db[:fleet_workers].where(id: worker_id).update(heartbeat_at: Sequel::CURRENT_TIMESTAMP)
      end

      def stop(worker_id)
        @db[:fleet_workers].where(id: worker_id)
                           .update(status: STOPPED, stopped_at: Sequel::CURRENT_TIMESTAMP, heartbeat_at: Sequel::CURRENT_TIMESTAMP)
      end

      # Records that the worker will not claim +experiment_id+'s batches,
      # and why (one line).
      def refuse(worker_id, experiment_id, reason)
        @db.transaction do
          row = @db[:fleet_workers].where(id: worker_id).for_update.first
          document = JSON.parse(row[:document] || "{}")
          document["refused"] = document.fetch("refused", {}).merge(experiment_id.to_s => reason)
          @db[:fleet_workers].where(id: worker_id).update(document: JSON.generate(document))
        end
      end

      # The running workers of +testbed+ (Hashes with "refused" decoded:
      # experiment id String => reason).
      def running(testbed)
        @db[:fleet_workers].where(testbed: testbed, status: RUNNING).order(:id).all.map do |row|
          row.merge(refused: JSON.parse(row[:document] || "{}").fetch("refused", {}))
        end
      end
    end
  end
end
