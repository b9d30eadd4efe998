# frozen_string_literal: true

require "etc"
require_relative "../monotonic_clock"

module Rackbench
  module Fleet
    # `rackbench worker URL --testbed NAME`: on one benchmark host, claims
    # the queue's batches for its testbed one at a time and runs each with
    # the ordinary Runner (the same pinning, identity checks, inside
    # counts, store of each record as it finishes), limited to the claimed
    # batch; the queue is its source. Never two batches, so never two
    # trials, at once.
    #
    # A thread beats the worker's and its batch's heartbeat; a batch whose
    # heartbeat stops (the worker died) goes back to the queue, claimed by
    # the next worker (any worker, and `run --fleet` while it follows, puts
    # such batches back: Queue#requeue_dead), and runs there whole, the
    # trials the dead worker stored kept as earlier attempts.
    #
    # Before claiming any batch of an experiment the worker checks it can
    # run it here (ExperimentCheck); an experiment it cannot run is
    # refused, with its reason recorded for `run --fleet` to show, and its
    # batches are left to the other workers.
    #
    # The worker never changes the database's schema (Store.open with
    # upgrade: false): hosts running another rackbench share it.
    class Worker
      include MonotonicClock

      DEFAULT_HEARTBEAT_S = 5.0
      DEFAULT_DEAD_AFTER_S = 60.0
      DEFAULT_POLL_S = 2.0

      # :store :: the database URL
      # :testbed :: the testbed whose batches it claims
      # :results_dir :: its own results directory (logs/, work/, the lock)
      # :name :: the host's name stored with every trial (default: the host name)
      # :out, :err :: progress, and warnings
      # :heartbeat_s :: seconds between heartbeats (default: 5)
      # :dead_after_s :: a claimed batch whose heartbeat is older goes back to the queue (default: 60)
      # :poll_s :: seconds between looks at an empty queue (default: 2)
      # :exit_when_idle :: stop when the queue holds nothing it can claim (default: false: wait for more)
      # :runner_options :: further Runner keywords (installs:, collaborators:, layout:, ...), for tests (default: {})
      def initialize(store:, testbed:, results_dir:, name: Etc.uname[:nodename], out: $stdout, err: $stderr,
                     heartbeat_s: DEFAULT_HEARTBEAT_S, dead_after_s: DEFAULT_DEAD_AFTER_S, poll_s: DEFAULT_POLL_S,
                     exit_when_idle: false, runner_options: {})
        @store_url = store
        @testbed = testbed
        @results_dir = results_dir
        @name = name
        @out = out
        @err = err
        @heartbeat_s = heartbeat_s
        @dead_after_s = dead_after_s
        @poll_s = poll_s
        @exit_when_idle = exit_when_idle
        @runner_options = runner_options
        @checked = {}
        @batches_run = 0
      end

      # Runs until interrupted (Ctrl-C, TERM: the batch being run is given
      # back to the queue and Interrupted raised), or with exit_when_idle
      # until nothing is left to claim. Returns the number of batches run.
      def run
        Store.open(@store_url, upgrade: false) do |store|
          @store = store
          @queue = Queue.new(store)
          @workers = Workers.new(store)
          @id = @workers.register(name: @name, testbed: @testbed, document: { "host" => Etc.uname[:nodename] })
          @out.puts "worker #{@name} (id #{@id}) on testbed #{@testbed}: claiming from #{store.location}"
          heartbeat = start_heartbeat
          begin
            loop_claims
          ensure
            heartbeat.kill.join
            stop_worker
          end
        end
        @batches_run
      rescue Sequel::Error => e
        # The database went away under the worker: one line; the batch it
        # held goes back to the queue when its heartbeat is late.
        raise Store::Error, "worker #{@name}: lost #{Store::Connection.redact(@store_url)}: #{Store::Connection.reason(e)}"
      end

      private

      def loop_claims
        loop do
          requeue_dead
          claim = @queue.claim(worker_id: @id, testbed: @testbed, refused: refused_ids)
          if claim
            run_claim(claim)
          else
            break if @exit_when_idle && check_queued.empty?

            sleep @poll_s
          end
        end
      end

      # Checks the experiments newly queued for the testbed; returns the ids
      # of those this worker can run that still have queued batches.
      def check_queued
        @queue.queued_experiment_ids(@testbed).reject { |id| refused_ids.include?(id) }
      end

      def refused_ids
        check_new
        @checked.reject { |_, outcome| outcome.is_a?(ExperimentCheck::Passed) }.keys
      end

      def check_new
        (@queue.queued_experiment_ids(@testbed) - @checked.keys).each do |id|
          row = @store.experiment(id)
          document = @queue.batches(id).first&.fetch(:document, nil)
          outcome = ExperimentCheck.new(runner: method(:runner)).call(row, document ? JSON.parse(document) : {})
          @checked[id] = outcome
          refuse(id, row[:name], outcome.reason) if outcome.is_a?(ExperimentCheck::Refused)
        end
      end

      def refuse(id, name, reason)
        @workers.refuse(@id, id, reason)
        @err.puts "rackbench worker: not claiming experiment #{name} (id #{id}): #{reason}"
      end

      def requeue_dead
        @queue.requeue_dead(dead_after_s: @dead_after_s).each do |row|
          @out.puts "batch #{row[:batch]} of experiment id #{row[:experiment_id]} back in the queue: its worker " \
                    "(id #{row[:worker_id]}) sent no heartbeat for #{@dead_after_s.round}s"
        end
      end

      def runner(experiment, **options)
        Runner.new(source: experiment, results_dir: @results_dir, resume: true, host: @name, out: @out, err: @err,
                   **@runner_options, **options)
      end

      # Runs the claimed batch whole through the Runner, storing through
      # ClaimedStore; marks it done, or gives it back when interrupted.
      def run_claim(claim)
        checked = @checked.fetch(claim.experiment_id)
        experiment = checked.experiment
        @current = claim
        @out.puts "claimed batch #{claim.batch} of #{experiment.name} (id #{claim.experiment_id})" \
                  "#{", run again whole" if claim.rerun}"
        store = ClaimedStore.new(@store, queue: @queue, claim: claim, worker_id: @id)
        runner(experiment, store: store, batch: claim.batch, rerun: claim.rerun, labels: checked.labels,
                           queued: @store.experiment(claim.experiment_id)).run
        @queue.finish(claim.id, @id)
        @batches_run += 1
      rescue ClaimLost => e
        @err.puts "rackbench worker: #{e.message}"
      rescue Interrupted, Interrupt
        @queue.release(claim.id, @id)
        raise Interrupted, "interrupted; batch #{claim.batch} went back to the queue"
      rescue Error => e
        # A batch this host cannot run (its disk is full, its engine is
        # missing) is given back for another host; this one claims no more
        # of the experiment.
        @queue.release(claim.id, @id)
        @checked[claim.experiment_id] = ExperimentCheck::Refused.new(reason: e.message.lines.first.to_s.strip)
        refuse(claim.experiment_id, experiment&.name, "batch #{claim.batch} failed here: #{e.message.lines.first.to_s.strip}")
      ensure
        @current = nil
      end

      # Beats every heartbeat_s on a thread of its own (its own connection
      # from the database's pool) while the worker lives.
      def start_heartbeat
        Thread.new do
          loop do
            sleep @heartbeat_s
            beat
          end
        end
      end

      def beat
        @workers.beat(@id)
        claim = @current
        return unless claim
        return if @queue.beat(claim.id, @id)

        @err.puts "rackbench worker: batch #{claim.batch} is no longer this worker's (it went back to the queue)"
      rescue Sequel::Error, Store::Error => e
        @err.puts "rackbench worker: heartbeat failed: #{Store::Connection.reason(e)}"
      end

      def stop_worker
        @workers.stop(@id)
      rescue Sequel::Error => e
        @err.puts "rackbench worker: could not record the stop: #{Store::Connection.reason(e)}"
      end
    end
  end
end
