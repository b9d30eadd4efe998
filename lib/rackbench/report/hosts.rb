# frozen_string_literal: true

module Rackbench
  class Report
    # Per-host figures of an experiment whose trials ran on several hosts (a
    # fleet's workers, Trial::Record#host), and the hosts whose figures
    # stand apart from the rest of their testbed.
    #
    # Why by batch: a fleet runs each batch whole on one host, so a batch
    # is a host's replicate of every configuration. Each batch gets an
    # index, the geometric mean over its configurations of the trial's rate
    # over that configuration's median rate in every batch: 1.0 for a batch
    # as fast as the experiment's middle, 0.9 for one 10% slower across the
    # board, whatever the configurations' own speeds. A host's batch
    # indexes are then compared with the other hosts' (Stats.compare: the
    # ratio of medians and its bootstrap CI over batches): a host is
    # flagged when that ratio's CI lies wholly outside the report's
    # equivalence band, i.e. it is detectably faster or slower than its
    # testbed (a throttled CPU, another kernel, a noisy neighbour). With few
    # batches a host is never flagged: "too few batches" says so. Pure
    # functions over the report's trials; no I/O.
    class Hosts
      # One host's line: its name, the batches it ran, its trials (ok and
      # failed), its median batch index, and its comparison with the rest of
      # the testbed (Stats::Comparison), flagged when detectably apart.
      # rates: configuration id => the host's median rate of it.
      Host = Struct.new(:name, :batches, :ok, :failed, :index, :comparison, :apart, :rates, keyword_init: true) do
        def to_h
          { "host" => name, "batches" => batches, "ok" => ok, "failed" => failed, "batch_index_median" => index,
            "vs_testbed" => comparison && { "ratio" => comparison.ratio, "ratio_ci95" => comparison.ratio_ci,
                                            "verdict" => comparison.verdict },
            "apart" => apart, "rate_median" => rates }
        end
      end

      # trials :: the report's TrialEntries; options :: its Report::Options
      # (equivalence, confidence, resamples, seed).
      def self.of(trials, options)
        new(trials, options).hosts
      end

      def initialize(trials, options)
        @trials = trials.select { |t| t.record.host }
        @options = options
      end

      # Hosts in name order, or [] when the trials ran on fewer than two.
      def hosts
        by_host = @trials.group_by { |t| t.record.host }
        return [] if by_host.size < 2

        indexes = batch_indexes
        by_host.keys.sort.map { |name| host(name, by_host[name], indexes) }
      end

      private

      def host(name, trials, indexes)
        own, others = indexes.partition { |(host, _), _| host == name }.map { |pairs| pairs.map(&:last) }
        comparison = own.empty? || others.empty? ? nil : compare(others, own)
        apart = !comparison.nil? && [Stats::FASTER, Stats::SLOWER].include?(comparison.verdict) &&
                !comparison.ratio_ci.all? { |bound| (bound - 1).abs <= @options.equivalence }
        ok = trials.select(&:ok?)
        rates = ok.group_by(&:config_id).to_h { |id, ts| [id, Stats.median(ts.map(&:rps))] }
        Host.new(name: name, batches: trials.map { |t| t.record.batch }.uniq.sort, ok: ok.size,
                 failed: trials.size - ok.size, index: own.empty? ? nil : Stats.median(own), comparison: comparison,
                 apart: apart, rates: rates)
      end

      def compare(others, own)
        Stats.compare(others, own, equivalence: @options.equivalence, confidence: @options.confidence,
                                   resamples: @options.resamples, seed: @options.seed)
      end

      # [host, batch] => the batch's index (see the class), for each batch
      # with an ok trial.
      def batch_indexes
        ok = @trials.select(&:ok?)
        medians = ok.group_by(&:config_id).transform_values { |ts| Stats.median(ts.map(&:rps)) }
        ok.group_by { |t| [t.record.host, t.batch] }.transform_values do |ts|
          logs = ts.map { |t| Math.log(t.rps / medians.fetch(t.config_id)) }
          Math.exp(logs.sum / logs.size)
        end
      end
    end
  end
end
