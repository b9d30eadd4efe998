# frozen_string_literal: true

module Rackbench
  module Detect
    # The Runner's stopping hook for --detect (Runner::TrialLoop asks it at
    # each trial): no limit while the pilot runs; at the first trial after
    # the pilot, the Decision, computed from the store's trials of the
    # pilot batches only (its throughputs, and for the time budget its
    # trials' wall times and boots), announced once on +out+. A resumed run
    # whose pilot is stored decides the same from the same trials, and
    # continues, or stops at once when the batches decided are stored.
    class Stopping
      # Resamples of the pilot's report, whose intervals nobody reads.
      PILOT_RESAMPLES = 100

      # :settings :: Detect::Settings
      # :store :: the open Store
      # :experiment_id :: the experiment being run
      # :plan :: its Experiment::Plan (made for settings.max_batches batches)
      # :out :: where the decision is announced
      def initialize(settings:, store:, experiment_id:, plan:, out:)
        @settings = settings
        @store = store
        @experiment_id = experiment_id
        @plan = plan
        @out = out
      end

      # The last batch to run when the next trial is of batch +batch+: nil
      # while the pilot runs (no limit yet), then the Decision's batches.
      def last_batch(batch)
        return nil if batch <= @settings.pilot_batches

        decision.batches
      end

      # The Decision (computed and announced at its first use).
      def decision
        @decision ||= Decision.new(pilot_configs, @settings, budget_batches: budget_batches).tap do |decision|
          decision.lines.each { |line| @out.puts "  #{line}" }
        end
      end

      private

      # The decision reads only each configuration's batches and its
      # baseline: the pilot report's intervals are never shown, so a few
      # resamples do (PILOT_RESAMPLES).
      def pilot_configs
        Report.new(@store, experiment_id: @experiment_id, baseline: @settings.baseline,
                           through_batch: @settings.pilot_batches, resamples: PILOT_RESAMPLES).configs
      end

      # The batches that fit the time budget, the pilot's included: the
      # pilot's stored wall time, then each later batch's estimate (its
      # trials' warmup and window, plus the boots and stops measured in the
      # pilot: Runner::Estimate), as long as the sum stays within the
      # budget. At least the pilot, which always runs. nil without a budget.
      def budget_batches
        return nil unless @settings.time_budget_s

        pilot = pilot_records
        estimate = Runner::Estimate.new
        pilot.each { |record| estimate.learn(record) }
        spent_s = pilot.sum { |record| record.wall_s.to_f }
        fits = @settings.pilot_batches
        by_batch = @plan.trials.group_by(&:batch)
        ((@settings.pilot_batches + 1)..@settings.max_batches).each do |batch|
          spent_s += estimate.remaining(by_batch.fetch(batch, [])).seconds
          break if spent_s > @settings.time_budget_s

          fits = batch
        end
        fits
      end

      def pilot_records
        @store.trials(@experiment_id, result: false).select { |r| r.batch.to_i <= @settings.pilot_batches }
      end
    end
  end
end
