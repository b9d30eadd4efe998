# frozen_string_literal: true

module Rackbench
  module Fleet
    # Follows a queued experiment until every batch is done: one line when
    # a batch is claimed, done, or put back in the queue (its worker sent no
    # heartbeat: this follower puts it back too, so a fleet whose every
    # worker died still shows it), as trials are stored, and once per
    # reason a worker gives for refusing the experiment. Returns the
    # Runner::Summary of the stored experiment.
    class Follow
      # :testbed :: whose workers' refusals to show
      # :out :: where the lines go
      # :poll_s :: seconds between looks (default: 2)
      # :dead_after_s :: see Queue#requeue_dead (default: Worker::DEFAULT_DEAD_AFTER_S)
      def initialize(store, experiment_id, testbed:, out:, poll_s: Worker::DEFAULT_POLL_S,
                     dead_after_s: Worker::DEFAULT_DEAD_AFTER_S)
        @store = store
        @experiment_id = experiment_id
        @testbed = testbed
        @out = out
        @poll_s = poll_s
        @dead_after_s = dead_after_s
        @queue = Queue.new(store)
        @workers = Workers.new(store)
        @states = {}
        @refusals = Set.new
        @stored = nil
      end

      def run
        loop do
          @queue.requeue_dead(dead_after_s: @dead_after_s)
          batches = @queue.batches(@experiment_id)
          report_batches(batches)
          report_trials
          report_refusals
          break if batches.all? { |b| b[:state] == Queue::DONE }

          sleep @poll_s
        end
        summary
      rescue Interrupt
        raise Interrupted, "stopped following; the queue keeps the batches"
      end

      private

      def report_batches(batches)
        batches.each do |b|
          state = [b[:state], b[:worker], b[:claims]]
          next if @states[b[:batch]] == state

          @states[b[:batch]] = state
          case b[:state]
          when Queue::CLAIMED
            @out.puts "  batch #{b[:batch]}: claimed by #{b[:worker]}#{" (claim #{b[:claims]}, run again whole)" if b[:claims] > 1}"
          when Queue::DONE then @out.puts "  batch #{b[:batch]}: done by #{b[:worker]}"
          when Queue::QUEUED
            @out.puts "  batch #{b[:batch]}: back in the queue (its worker stopped), to run again whole" if b[:claims].positive?
          end
        end
      end

      def report_trials
        count = @store.finished_keys(@experiment_id).size
        return if count == @stored

        @stored = count
        @out.puts "  #{count} trials stored"
      end

      def report_refusals
        @workers.running(@testbed).each do |worker|
          reason = worker[:refused][@experiment_id.to_s]
          next unless reason && @refusals.add?([worker[:id], reason])

          @out.puts "  worker #{worker[:name]} will not run it: #{reason}"
        end
      end

      def summary
        records = @store.trials(@experiment_id, result: false)
        Runner::Summary.new(experiment_id: @experiment_id, ok: records.count(&:ok?), failed: records.count { |r| !r.ok? },
                            skipped: 0, already_done: 0, not_run: 0)
      end
    end
  end
end
