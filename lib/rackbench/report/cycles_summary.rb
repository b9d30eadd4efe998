# frozen_string_literal: true

module Rackbench
  class Report
    # Estimated cycles per request of one configuration over its
    # instructions trials that ran callgrind's cache simulation
    # (`instructions: { cache_sim: true }`, Instructions::Cycles): the
    # median over the batches, its interval, the CV, and against the
    # baseline the ratio of medians with its interval and a verdict in the
    # words of time (fewer cycles: "faster"), judged with the instructions'
    # equivalence band (a simulation varies as little as a count). Beside
    # it the misses per request that make the estimate differ from the
    # instructions: last-level hits (L1 misses) and memory accesses.
    class CyclesSummary
      # The summary of +trials+ (a configuration's instructions trials),
      # or nil when no ok one ran the simulation.
      def self.of(trials, options)
        simulated = trials.select { |t| t.ok? && t.instructions&.dig("cache_sim", "per_request") }
        simulated.empty? ? nil : new(simulated, options)
      end

      attr_reader :values, :batch_numbers, :summary, :ci

      def initialize(trials, options)
        @options = options
        @trials = trials
        @values = trials.map { |t| t.instructions["cache_sim"]["per_request"] }
        @batch_numbers = trials.map(&:batch)
        @summary = Stats.summary(@values)
        @ci = if @values.size >= options.min_batches
                Stats.bootstrap_ci(@values, statistic: :median, confidence: options.confidence,
                                            resamples: options.resamples, seed: options.seed)
              end
      end

      def batches = @values.size
      def median = @summary.median

      # Against +baseline+ (another CyclesSummary): {"ratio", "ratio_ci95",
      # "verdict", "explanation", "batches_needed"}.
      def compare(baseline)
        c = Stats.compare(baseline.values, @values, **@options.compare_options(instructions: true))
        verdict = { Stats::FASTER => Stats::SLOWER, Stats::SLOWER => Stats::FASTER }.fetch(c.verdict, c.verdict)
        explanation = c.explanation.to_s.sub("above 1", "above 1: more estimated cycles per request")
                       .sub("below 1", "below 1: fewer estimated cycles per request")
        { "ratio" => c.ratio, "ratio_ci95" => c.ratio_ci, "verdict" => verdict, "explanation" => explanation,
          "batches_needed" => c.batches_needed }
      end

      # Median per request over the batches of the simulation's hits
      # outside the first level: {"ll_hits", "ram_hits"}.
      def misses
        %w[ll_hits ram_hits].to_h do |name|
          [name, Stats.median(@trials.map { |t| t.instructions["cache_sim"][name].to_f / t.instructions["requests"].to_i })]
        end
      end

      # The configuration's "cycles" entry of the report document
      # (doc/output.md, configs.cycles).
      def to_h(baseline: nil, baseline_id: nil)
        { "batches" => batches, "model" => @trials.first.instructions["cache_sim"]["model"],
          "per_request" => { "median" => median, "mean" => @summary.mean, "cv" => @summary.cv, "ci95" => @ci,
                             "per_batch" => @values, "batch_numbers" => @batch_numbers },
          "misses_per_request" => misses,
          "baseline_id" => baseline && baseline_id, "against_baseline" => baseline && compare(baseline) }
      end
    end
  end
end
