# frozen_string_literal: true

require "json"
require "sequel"

module Rackbench
  module Fleet
    # The queue of batches in the results database (tables fleet_batches
    # and fleet_workers, schema 8): what `run --fleet` puts there, what
    # workers claim, beat a heartbeat for and finish, and what goes back to
    # the queue when its worker stops beating.
    #
    # The unit is a whole batch (every configuration of one batch, in its
    # seeded order): every ratio of a batch pairs trials of one host.
    #
    # A claim is one statement in one transaction: an UPDATE of the oldest
    # queued batch of the testbed, chosen by a sub-select that locks it FOR
    # UPDATE SKIP LOCKED, RETURNING the row. Two workers claiming at once
    # never wait for each other and never both get a batch: the second
    # skips the row the first has locked. SQLite has neither clause nor
    # needs them (one writer at a time); the same dataset runs there for
    # the unit tests.
    #
    # Times are the database's (CURRENT_TIMESTAMP), never a host's clock:
    # hosts whose clocks disagree still agree on whose heartbeat is late.
    class Queue
      QUEUED = "queued"
      CLAIMED = "claimed"
      DONE = "done"

      # A claimed batch: the row's id, its experiment and batch number,
      # whether its stored trials run again (rerun), how many times it has
      # been claimed, and where its experiment's file was (document).
      Claim = Struct.new(:id, :experiment_id, :batch, :rerun, :claims, :document, keyword_init: true)

      # :store :: an open Store (its database holds the queue)
      def initialize(store)
        @store = store
        @db = store.db
        @db.extension :date_arithmetic
      end

      # Queues the batches of +experiment_id+ not queued yet, for +testbed+.
      # document :: where the experiment's file was ("base_dir", "source"),
      #             for the workers to parse it the same way.
      # Returns the numbers of the batches queued now.
      def enqueue(experiment_id, batches:, testbed:, document:)
        @db.transaction do
          have = batches_of(experiment_id).select_map(:batch).to_set
          fresh = (1..batches).reject { |batch| have.include?(batch) }
          rows = fresh.map do |batch|
            { experiment_id: experiment_id, batch: batch, testbed: testbed, state: QUEUED,
              queued_at: Sequel::CURRENT_TIMESTAMP, document: JSON.generate(document) }
          end
          @db[:fleet_batches].multi_insert(rows)
          fresh
        end
      end

      # Queues again, to run whole, the done batches of +experiment_id+
      # that hold a failed trial (--retry-failed through the queue). Returns
      # their numbers.
      def requeue_failed(experiment_id)
        failed = @db[:trials].where(experiment_id: experiment_id, status: "failed").select(:batch)
        batches_of(experiment_id).where(state: DONE, batch: failed).returning(:batch)
                                 .update(state: QUEUED, rerun: true, worker_id: nil, queued_at: Sequel::CURRENT_TIMESTAMP)
                                 .map { |row| row[:batch] }.sort
      end

      # Claims the oldest queued batch of +testbed+ for worker +worker_id+,
      # leaving out the experiments in +refused+ (ids the worker's checks
      # refused). Returns a Claim, or nil when there is nothing to claim.
      def claim(worker_id:, testbed:, refused: [])
        candidate = @db[:fleet_batches].where(testbed: testbed, state: QUEUED).exclude(experiment_id: refused.to_a)
                                       .order(:id).limit(1).select(:id)
        candidate = candidate.for_update.skip_locked if candidate.supports_skip_locked?
        row = @db.transaction do
          @db[:fleet_batches].where(id: candidate, state: QUEUED).returning
                             .update(state: CLAIMED, worker_id: worker_id, run_id: nil, claims: Sequel[:claims] + 1,
                                     claimed_at: Sequel::CURRENT_TIMESTAMP, heartbeat_at: Sequel::CURRENT_TIMESTAMP)
                             .first
        end
        row && Claim.new(id: row[:id], experiment_id: row[:experiment_id], batch: row[:batch], rerun: row[:rerun],
                         claims: row[:claims], document: row[:document] ? JSON.parse(row[:document]) : {})
      end

      # The experiments with batches queued for +testbed+, oldest first: what
      # a worker checks before it claims.
      def queued_experiment_ids(testbed)
        @db[:fleet_batches].where(testbed: testbed, state: QUEUED).group(:experiment_id)
                           .order(Sequel.function(:min, :id)).select_map(:experiment_id)
      end

      # The heartbeat of a claimed batch (and of its worker). Returns false
      # when the batch is no longer the worker's (its heartbeat came too
      # late and it went back to the queue).
      def beat(claim_id, worker_id)
        held = @db[:fleet_batches].where(id: claim_id, worker_id: worker_id, state: CLAIMED)
                                  .update(heartbeat_at: Sequel::CURRENT_TIMESTAMP)
        held.positive?
      end

      # Whether worker_id still holds claim_id, taking a row lock on it
      # until the caller's transaction ends: a trial is stored under the
      # lock, so a batch cannot go back to the queue half-way through a
      # store.
      def held?(claim_id, worker_id)
        !@db[:fleet_batches].where(id: claim_id, worker_id: worker_id, state: CLAIMED).for_update.get(:id).nil?
      end

      # Records the run (runs.id) the worker's Runner started for the claim.
      def started(claim_id, worker_id, run_id)
        @db[:fleet_batches].where(id: claim_id, worker_id: worker_id, state: CLAIMED).update(run_id: run_id)
      end

      # Marks the claimed batch done, and its experiment finished when it
      # was the last; false when it was not the worker's any more.
      def finish(claim_id, worker_id)
        @db.transaction do
          row = @db[:fleet_batches].where(id: claim_id, worker_id: worker_id, state: CLAIMED).for_update.first
          next false unless row

          @db[:fleet_batches].where(id: claim_id).update(state: DONE, rerun: false, finished_at: Sequel::CURRENT_TIMESTAMP)
          unless batches_of(row[:experiment_id]).exclude(state: DONE).count.positive?
            @db[:experiments].where(id: row[:experiment_id]).update(finished_at: Time.now)
          end
          true
        end
      end

      # Gives a claimed batch back (its worker stopped on TERM or Ctrl-C, or
      # failed before it ran a trial): queued again, to run whole.
      def release(claim_id, worker_id)
        @db[:fleet_batches].where(id: claim_id, worker_id: worker_id, state: CLAIMED)
                           .update(state: QUEUED, rerun: true, worker_id: nil, heartbeat_at: nil).positive?
      end

      # Puts back in the queue every claimed batch whose heartbeat is older
      # than +dead_after_s+ (its worker died, or lost the database): it
      # will run again whole, its trials stored so far kept as earlier
      # attempts. The dead worker's run is marked interrupted. Returns the
      # rows put back ({id:, experiment_id:, batch:, worker_id:}).
      def requeue_dead(dead_after_s:)
        late = Sequel.date_sub(Sequel::CURRENT_TIMESTAMP, seconds: dead_after_s)
        @db.transaction do
          late_rows = @db[:fleet_batches].where(state: CLAIMED).where { heartbeat_at < late }
          late_rows = late_rows.for_update.skip_locked if late_rows.supports_skip_locked?
          rows = late_rows.select(:id, :experiment_id, :batch, :worker_id, :run_id).all
          return [] if rows.empty?

          @db[:fleet_batches].where(id: rows.map { |row| row[:id] })
                             .update(state: QUEUED, rerun: true, worker_id: nil, heartbeat_at: nil)
          runs = rows.filter_map { |row| row[:run_id] }
          @db[:runs].where(id: runs, status: "running").update(status: "interrupted", finished_at: Time.now) unless runs.empty?
          rows.map { |row| row.except(:run_id) }
        end
      end

      # The batches of +experiment_id+, in order, as Hashes with the name of
      # the worker holding or having run each (worker).
      def batches(experiment_id)
        batches_of(experiment_id).left_join(:fleet_workers, id: :worker_id)
                                 .select_all(:fleet_batches).select_append(Sequel[:fleet_workers][:name].as(:worker))
                                 .order(:batch).all
      end

      private

      def batches_of(experiment_id)
        @db[:fleet_batches].where(experiment_id: experiment_id)
      end
    end
  end
end
