# frozen_string_literal: true

require "time"
require_relative "errors"

module Rackbench
  # `rackbench history`: each configuration's figure across the labelled
  # runs of one experiment (Series::Run), in order of date or of revision,
  # with the interval of each run and the change points marked
  # (Stats.change_points), each named by the run's revision and what
  # changed since the run before. A pure function of the stored runs.
  #
  # Only runs of one machine (or one testbed) are one series: the machine
  # of the latest run, or of the latest run on the host or testbed asked
  # for. Runs of other machines are listed apart, with what
  # tells their machine from the series' (Report::MachineMatch), never
  # drawn in it: a faster host is not a faster revision.
  #
  #   series = Rackbench::Series.new(Series.collect(["rackbench-results"]), figure: BatchFigures.fetch("rps"),
  #                                  options: Report::Options.new)
  #   series.to_h # doc/output.md, "The history document"
  class Series
    FORMAT = "rackbench-history"
    FORMAT_VERSION = 1
    ORDERS = %w[date revision].freeze

    # One run's figure for one configuration: the median over its ok
    # batches, its bootstrap interval (nil below min_batches), the batches
    # counted and the failed trials.
    Point = Struct.new(:median, :ci, :batches, :failed, keyword_init: true) do
      def to_h = { "median" => median, "ci" => ci, "batches" => batches, "failed" => failed }
    end

    # A change point of a configuration's series (Stats::ChangePoint) in
    # the views' terms: +run+ (its position), the runs of the band it left,
    # the band, +change+ (its median against the median of theirs, a
    # fraction: -0.1 is 10% lower), the run's labels and what changed since
    # the run before it.
    Change = Struct.new(:run, :band_runs, :band, :direction, :change, :revision, :changes, keyword_init: true) do
      def to_h
        { "run" => run, "band_runs" => band_runs, "band" => band, "direction" => direction, "change" => change,
          "revision" => revision, "changes" => changes }
      end
    end

    # One configuration across the runs: a Point per run (nil where the
    # run did not have the configuration) and its change points.
    Config = Struct.new(:id, :label, :points, :changes, keyword_init: true)

    attr_reader :runs, :apart, :configs, :figure, :order

    # runs :: [Run] (Series.collect)
    # figure :: Report::BatchFigures::Figure
    # options :: Report::Options (confidence, equivalence, min_batches, resamples, seed)
    # :order :: "date" (when each run started) or "revision" (when its
    #           revisions were committed; runs without one by date) (default: "date")
    # :only :: dimension=value pairs a configuration must have, e.g. "server=puma" (default: nil: all)
    # :machine :: the hostname or testbed whose runs are the series (default: nil: the latest run's)
    def initialize(runs, figure:, options:, order: "date", only: nil, machine: nil)
      raise UsageError, "--order is date or revision, not '#{order}'" unless ORDERS.include?(order)
      raise UsageError, "no run to draw a history of" if runs.empty?

      @figure = figure
      @options = options
      @order = order
      reference = reference_run(runs, machine)
      @machine = reference.machine
      @runs, @apart = sorted(runs).partition { |run| run.machine_key == reference.machine_key }
      @apart_differences = @apart.to_h do |run|
        [run, Report::MachineMatch.differences(@machine, run.machine, testbed_a: reference.labels.testbed,
                                                                      testbed_b: run.labels.testbed)]
      end
      @configs = build_configs(only)
    end

    # The history document (doc/output.md).
    def to_h
      {
        "format" => FORMAT, "format_version" => FORMAT_VERSION, "generated_at" => Time.now.utc.iso8601,
        "rackbench_version" => Rackbench::VERSION, "experiment" => @runs.first.experiment[:name],
        "figure" => { "name" => @figure.name, "words" => @figure.words, "better" => @figure.better.to_s,
                      "unit" => @figure.unit.to_s },
        "order" => @order, "machine" => Report::MachineMatch.describe(@machine),
        "settings" => { "confidence" => @options.confidence, "equivalence" => @options.equivalence,
                        "min_batches" => @options.min_batches, "bootstrap_seed" => @options.seed },
        "runs" => @runs.each_with_index.map { |run, i| run_h(run, i) },
        "configs" => @configs.map { |c| config_h(c) },
        "apart" => @apart.map { |run| apart_h(run) }
      }
    end

    private

    # The latest run, or the latest on host or testbed +machine+.
    def reference_run(runs, machine)
      candidates = machine ? runs.select { |run| [run.labels.testbed, run.machine_key["hostname"]].include?(machine) } : runs
      if candidates.empty?
        hosts = runs.map { |run| run.labels.testbed || run.machine_key["hostname"] }.uniq.compact
        raise UsageError, "no run on '#{machine}' (machines: #{hosts.join(", ")})"
      end
      candidates.max_by { |run| [run.created_at, run.id] }
    end

    def sorted(runs)
      runs.sort_by do |run|
        time = @order == "revision" ? run.revision_time || run.created_at : run.created_at
        [time, run.created_at, run.location.to_s, run.id]
      end
    end

    def build_configs(only)
      wanted = parse_only(only)
      ids = @runs.flat_map { |run| run.report.configs.map(&:id) }.uniq
      summaries = @runs.map { |run| run.report.configs.to_h { |c| [c.id, c] } }
      dims = ids.to_h { |id| [id, summaries.filter_map { |s| s[id] }.first.dims] }
      ids = ids.select { |id| wanted.all? { |name, value| Report.format_dim(dims[id][name]) == value } }
      raise UsageError, "no configuration matches '#{only}'" if ids.empty?

      varying = dims.values.flat_map(&:keys).uniq.select { |name| dims.values.map { |d| d[name] }.uniq.size > 1 }
      ids.map do |id|
        points = summaries.map { |s| s[id] && point(s[id]) }
        label = varying.empty? ? id : varying.map { |name| "#{name}=#{Report.format_dim(dims[id][name])}" }.join(" ")
        Config.new(id: id, label: label, points: points, changes: changes(points))
      end
    end

    def parse_only(text)
      return {} if text.nil? || text.strip.empty?

      text.split.to_h do |pair|
        name, value = pair.split("=", 2)
        raise UsageError, "--config takes dimension=value pairs, got '#{pair}'" unless value

        [name, value]
      end
    end

    def point(config)
      values = @figure.of(config)
      ci = if values && values.size >= @options.min_batches
             Stats.bootstrap_ci(values, statistic: :median, confidence: @options.confidence,
                                        resamples: @options.resamples, seed: @options.seed)
           end
      Point.new(median: values && Stats.median(values), ci: ci, batches: values&.size || 0, failed: config.failed)
    end

    def changes(points)
      Stats.change_points(points.map { |p| p&.ci }, equivalence: @options.equivalence).map do |found|
        reference = Stats.median(found.runs.map { |i| points[i].median })
        run = @runs[found.index]
        before = @runs[found.index - 1]
        Change.new(run: found.index, band_runs: found.runs, band: found.band, direction: found.direction,
                   change: points[found.index].median / reference - 1.0, revision: run.labels.text,
                   changes: run.labels.changes_from(before.labels))
      end
    end

    def run_h(run, index)
      previous = index.positive? ? @runs[index - 1] : nil
      { "run" => index, "experiment_id" => run.id, "location" => run.location,
        "created_at" => run.created_at.utc.iso8601, "revision_time" => run.revision_time&.utc&.iso8601,
        "labels" => run.labels.to_h, "labels_text" => run.labels.text,
        "changes" => previous ? run.labels.changes_from(previous.labels) : [] }
    end

    def config_h(config)
      { "id" => config.id, "label" => config.label, "points" => config.points.map { |p| p&.to_h },
        "change_points" => config.changes.map(&:to_h) }
    end

    def apart_h(run)
      { "experiment_id" => run.id, "location" => run.location, "created_at" => run.created_at.utc.iso8601,
        "labels_text" => run.labels.text, "machine" => Report::MachineMatch.describe(run.machine),
        "differences" => @apart_differences.fetch(run),
        "medians" => run.report.configs.to_h { |c| [c.id, (values = @figure.of(c)) && Stats.median(values)] } }
    end
  end
end

require_relative "series/run"
require_relative "series/terminal"
require_relative "series/html_page"
