# frozen_string_literal: true

require "delegate"

module Rackbench
  module Fleet
    # The store a worker's Runner writes to while it holds a claim: the
    # worker's Store, except that each trial is stored in a transaction
    # that first locks the claimed batch's row and checks the worker still
    # holds it. A worker presumed dead (its heartbeat late: a long pause, a
    # lost network) whose batch went to another worker stores nothing more
    # of it: ClaimLost stops its run, and the trials stay those of the
    # worker that holds the batch.
    class ClaimedStore < SimpleDelegator
      # :store :: the worker's open Store
      # :queue :: its Queue
      # :claim :: the Queue::Claim held
      # :worker_id :: the worker's id
      def initialize(store, queue:, claim:, worker_id:)
        super(store)
        @queue = queue
        @claim = claim
        @worker_id = worker_id
      end

      def save_trial(experiment_id, record, **options)
        db.transaction do
          unless @queue.held?(@claim.id, @worker_id)
            raise ClaimLost, "batch #{@claim.batch} of experiment #{experiment_id} went back to the queue (this " \
                             "worker's heartbeat came too late): trial #{record.key} is not stored"
          end
          __getobj__.save_trial(experiment_id, record, **options)
        end
      end

      # A finished run is a finished batch, not experiment: the queue marks
      # the experiment when its last batch is done (Queue#finish).
      def finish_run(run_id, status)
        __getobj__.finish_run(run_id, status, experiment_done: false)
      end

      # The worker's run of the batch, recorded with the claim so that a
      # requeue marks it interrupted.
      def start_run(experiment_id, **options)
        __getobj__.start_run(experiment_id, **options).tap { |run_id| @queue.started(@claim.id, @worker_id, run_id) }
      end
    end

    # The claimed batch is no longer this worker's.
    class ClaimLost < Error; end
  end
end
