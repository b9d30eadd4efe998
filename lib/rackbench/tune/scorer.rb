# frozen_string_literal: true

module Rackbench
  module Tune
    # How tune scores a candidate from its stored batches. A scorer is any
    # object with #score(records) returning a Score and #description (one
    # line for the reports): WithinLatency is the one shipped; a capacity
    # search's answer (the highest open-loop rate that holds the target)
    # plugs in the same way, by scoring the records of its confirmation
    # runs.
    module Scorer
      # A candidate's score: +per_batch+ (one Batch per ok batch, in batch
      # order), +median+ of the batch values, +ci95+ (bootstrap interval of
      # the median over the batches; nil below MIN_BATCHES) and +qualified+
      # (the median batch held the target).
      Score = Struct.new(:per_batch, :median, :ci95, :qualified, keyword_init: true) do
        def values = per_batch.map(&:value)

        def to_h
          { "median" => median, "ci95" => ci95, "qualified" => qualified, "per_batch" => per_batch.map(&:to_h) }
        end
      end

      # One batch: its throughput, its latency at the target's percentile
      # (µs), and its value (the throughput when the latency held, else 0).
      Batch = Struct.new(:batch, :rps, :latency_us, :value, keyword_init: true) do
        def held? = value.positive?

        def to_h
          { "batch" => batch, "rps" => rps, "latency_us" => latency_us, "value" => value }
        end
      end

      # Throughput within a latency target, closed loop: a batch scores its
      # requests/s when its percentile (from its own histogram) is at most
      # the target, else 0. Why 0 and not a penalty: a configuration that
      # misses the target serves no request the target allows; a median
      # over batches then says whether it usually holds.
      class WithinLatency
        # Batches below which a score has no interval: the report's rule
        # (Report::Options min_batches, doc/methodology.md "Why at least 5
        # batches"): with 3 batches, a bootstrap interval of the median is
        # little more than the lowest and highest batch.
        MIN_BATCHES = 5

        attr_reader :percentile, :target_us

        # :percentile :: e.g. 99.0
        # :target_us :: the latency the percentile must not exceed (µs)
        # :seed :: the bootstrap's seed (default: 1)
        def initialize(percentile:, target_us:, seed: 1)
          @percentile = percentile
          @target_us = target_us
          @seed = seed
        end

        def description
          "requests/s of each batch whose p#{format("%g", @percentile)} is at most " \
            "#{Units.latency_us(@target_us)}, else 0; the median over batches"
        end

        # The Score of a candidate's +records+ (Trial::Record; failed ones
        # are left out), or nil when none is ok.
        def score(records)
          batches = records.select(&:ok?).sort_by(&:batch).map { |record| batch(record) }
          return nil if batches.empty?

          values = batches.map(&:value)
          median = Stats.summary(values).median
          ci = values.size >= MIN_BATCHES ? Stats.bootstrap_ci(values, statistic: :median, seed: @seed) : nil
          Score.new(per_batch: batches, median: median, ci95: ci, qualified: median.positive?)
        end

        private

        def batch(record)
          latency = latency_us(record)
          rps = record.rate.to_f
          held = latency && latency <= @target_us
          Batch.new(batch: record.batch, rps: rps, latency_us: latency, value: held ? rps : 0.0)
        end

        # The batch's own percentile: from its histogram, else the engine's
        # summary when it has that percentile; nil (the batch does not hold)
        # without either.
        def latency_us(record)
          histogram = record.histogram
          return Stats::LatencyHistogram.new(histogram).percentile_us(@percentile) if histogram

          record.latency_us&.fetch("p#{format("%g", @percentile).tr(".", "_")}", nil)
        end
      end
    end
  end
end
