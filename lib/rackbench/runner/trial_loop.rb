# frozen_string_literal: true

require "fileutils"
require_relative "estimate"
require_relative "progress"

module Rackbench
  class Runner
    # Once the plan is known: record a run in the store, run each remaining
    # trial with a progress line, store its Trial::Record before the next
    # one starts, and record how the run ended. After Ctrl-C the run is
    # marked interrupted and Interrupted is raised; the finished trials are
    # already stored.
    class TrialLoop
      # :store :: an open Store
      # :experiment_id :: the experiment the trials belong to
      # :plan :: the whole Experiment::Plan (size, skipped)
      # :remaining :: the plan's trials not stored yet, in order
      # :resumed :: whether the experiment already held trials (--resume)
      # :out :: where progress goes
      # :describe :: a Trial::Record => the result part of its progress line
      # :estimate :: the Estimate of the trials left, learning from each that ends (default: a fresh one)
      # :fail_fast :: stop at the first failed trial (default: false)
      # :environment :: the machine's description at this run's start, stored with the run (default: nil)
      # :retries :: key => Store::History::Failed, the remaining trials that are failures run again
      #             (--retry-failed): each is stored as the next attempt at its key (default: {})
      # :host :: the host's name, stored with each record (default: nil: none)
      # :stopping :: asked before each trial for the last batch to run (#last_batch(batch) => Integer,
      #              or nil for no limit yet; Detect::Stopping): the first trial of a later batch ends
      #              the run, the plan's later batches unrun (default: nil: the whole plan runs)
      def initialize(store:, experiment_id:, plan:, remaining:, resumed:, out:, describe:, estimate: Estimate.new,
                     fail_fast: false, environment: nil, retries: {}, stopping: nil, host: nil)
        @store = store
        @experiment_id = experiment_id
        @plan = plan
        @remaining = remaining
        @resumed = resumed
        @out = out
        @describe = describe
        @estimate = estimate
        @fail_fast = fail_fast
        @environment = environment
        @retries = retries
        @stopping = stopping
        @host = host
      end

      # Runs the block on each remaining trial; the block returns its
      # Trial::Record. Returns a Summary.
      def run
        run_id = @store.start_run(@experiment_id, resumed: @resumed, environment: @environment)
        summary = Summary.new(experiment_id: @experiment_id, ok: 0, failed: 0, skipped: @plan.skipped.size,
                              already_done: @plan.size - @remaining.size, not_run: 0)
        progress = Progress.new(out: @out, total: @plan.size, already_done: summary.already_done)
        @remaining.each_with_index do |trial, i|
          # Asked at every trial, decided once (at the first after the pilot); the
          # plan runs batch by batch, so every trial after this one is of a later batch.
          last_batch = @stopping&.last_batch(trial.batch)
          if last_batch
            @last_batch = last_batch
            progress.total = @plan.trials.count { |t| t.batch <= last_batch }
            if trial.batch > last_batch
              stop_early(last_batch, summary)
              break
            end
          end
          progress.starting(trial, eta: @estimate.remaining(left_from(i)))
          earlier = @retries[trial.key]
          earlier_log = keep_log(earlier) if earlier
          record = yield trial
          record = record.with(attempt: earlier.attempt + 1) if earlier
          record = record.with(host: @host) if @host
          # committed before the next trial starts
          @store.save_trial(@experiment_id, record, earlier_log_path: earlier_log,
                                                    replace_any: earlier&.replace_any || false)
          progress.finished(@describe.call(record), record.wall_s,
                            eta: @estimate.learn(record).remaining(left_from(i + 1)))
          record.ok? ? summary.ok += 1 : summary.failed += 1
          raise Error, "stopping (--fail-fast): #{record.reason}" if @fail_fast && !record.ok?
        end
        @store.finish_run(run_id, "finished")
        summary
      rescue Interrupt, Interrupted
        progress&.abort
        @store.finish_run(run_id, "interrupted") if run_id
        @out.puts
        raise Interrupted, "interrupted; the finished trials are stored"
      rescue StandardError
        progress&.abort
        @store.finish_run(run_id, "failed") if run_id
        raise
      end

      private

      # The remaining trials from the i-th on that will run: those up to
      # the stopping rule's last batch once it has decided.
      def left_from(index)
        left = @remaining.drop(index)
        @last_batch ? left.select { |trial| trial.batch <= @last_batch } : left
      end

      def stop_early(last_batch, summary)
        left = @remaining.count { |trial| trial.batch > last_batch }
        summary.not_run = left
        @out.puts "  stopping after batch #{last_batch}: the plan's #{left} later trials are not run"
      end

      # The retry writes its log where the failure's was: the failure's is
      # copied beside it first ("NAME.attempt-1.log"), for its history row.
      # A copy already there is the failure's own, from a retry that was
      # interrupted (which overwrote the log, storing nothing): it is kept.
      # nil when the failure had no log.
      #
      # The trial's directory (work/NAME: the reset's log, the app's own
      # logs, the identity reports) is copied the same way, to
      # work/NAME.attempt-N, since the retry writes there too.
      def keep_log(earlier)
        path = earlier.log_path
        kept = path && "#{path.delete_suffix(".log")}.attempt-#{earlier.attempt}.log"
        keep_work_dir(path, earlier.attempt) if path
        return kept if kept && File.file?(kept)
        return nil unless path && File.file?(path)

        FileUtils.cp(path, kept)
        kept
      end

      # logs/NAME.log's trial directory is work/NAME, beside logs/.
      def keep_work_dir(log_path, attempt)
        work = File.join(File.dirname(File.dirname(log_path)), "work", File.basename(log_path, ".log"))
        kept = "#{work}.attempt-#{attempt}"
        FileUtils.cp_r(work, kept) if File.directory?(work) && !File.exist?(kept)
      end
    end
  end
end
