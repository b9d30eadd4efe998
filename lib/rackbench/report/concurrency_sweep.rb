# frozen_string_literal: true

module Rackbench
  class Report
    # Latency and throughput against concurrency (seed 002's charts): when
    # load.connections is a dimension of the report, the configurations
    # are grouped by everything else (a "sweep" per ruby, server, app,
    # processes, threads...), and each group lists, per number of
    # connections, the median throughput with its interval and p50, p95 and
    # p99 from the histograms merged over its ok batches (as the
    # configurations table reads them), with the range of each percentile
    # over the batches where there are two or more.
    #
    # A pure function of the report's configurations (ConfigSummary): the
    # report document carries its result as "concurrency_sweep"
    # (doc/output.md), which the terminal (ConcurrencySweepTerminal) and the
    # HTML page (HtmlReport::Charts.concurrency_sweep) draw.
    module ConcurrencySweep
      DIMENSION = "load.connections"
      PERCENTILES = [50, 95, 99].freeze

      module_function

      # The sweeps of +configs+ (ConfigSummary, report order) when
      # +dimensions+ (the report's varying dimensions) include
      # load.connections, else nil: [{"id", "label", "dims", "points" =>
      # [point, ...] by connections}].
      def of(configs, dimensions)
        return nil unless dimensions.include?(DIMENSION)

        others = dimensions - [DIMENSION]
        configs.group_by { |c| c.dims.except(DIMENSION) }.map do |dims, group|
          label = others.map { |name| Report.format_dim(dims[name]) }.join(" · ")
          { "id" => Report.config_id(dims), "label" => label.empty? ? "all" : label, "dims" => dims,
            "points" => group.sort_by { |c| c.dims[DIMENSION].to_i }.map { |c| point(c) } }
        end
      end

      # One number of connections of a sweep: its configuration's id,
      # batches, throughput (median, 95% interval or nil), merged
      # percentiles in µs ({"p50", "p95", "p99"}, nil without a histogram)
      # and their range over the batches ({"p50" => [low, high], ...}, nil
      # with fewer than two batches with a histogram).
      def point(config)
        {
          "connections" => config.dims[DIMENSION], "config_id" => config.id, "batches" => config.batches,
          "rps_median" => config.rps_median, "rps_ci95" => config.rps_ci,
          "latency_us" => percentiles(config.histogram),
          "latency_us_batch_range" => batch_range(config.ok_trials.filter_map { |t| t.histogram && Stats::LatencyHistogram.new(t.histogram) })
        }
      end

      def percentiles(histogram)
        return nil if histogram.nil? || histogram.empty?

        PERCENTILES.to_h { |p| ["p#{p}", histogram.percentile_us(p)] }
      end

      # Why a range and not an interval: with the few batches a sweep runs
      # (one per connections value), the lowest and highest batch say how
      # far one boot's tail differs from another's without claiming a
      # coverage they cannot have.
      def batch_range(histograms)
        per_batch = histograms.reject(&:empty?).map { |h| percentiles(h) }
        return nil if per_batch.size < 2

        PERCENTILES.to_h do |p|
          values = per_batch.map { |figures| figures["p#{p}"] }
          ["p#{p}", values.minmax]
        end
      end
    end
  end
end
