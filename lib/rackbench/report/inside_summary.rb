# frozen_string_literal: true

require_relative "inside_figures"
require_relative "inside_compare"

module Rackbench
  class Report
    # The inside figures (InsideFigures) of one configuration over its ok
    # batches, with the batch statistics its throughput has: median, mean,
    # CV and the percentile-bootstrap interval of the median (from
    # Options#min_batches batches with the figure). Also the per-process
    # memory of every batch (the HTML memory chart), the noise of CPU per
    # request against requests/s over the same batches, and the comparison
    # with the configuration's baseline (InsideCompare).
    class InsideSummary
      # What each figure is, for the views: its label and the Units-like
      # kind its values are written as (InsideSummary.format).
      FIGURES = {
        "cpu_us_per_request" => ["server CPU per request", :us],
        "allocations_per_request" => ["allocations per request", :count],
        "gc_per_1k_requests" => ["GC runs per 1,000 requests", :count],
        "gc_ms_per_1k_requests" => ["GC ms per 1,000 requests", :ms],
        "major_gc_per_1k_requests" => ["major GCs per 1,000 requests", :count],
        "worker_pss_bytes" => ["PSS per worker (window end)", :bytes],
        "worker_pss_growth_bytes" => ["PSS growth per worker over the window", :bytes],
        "total_pss_bytes" => ["PSS of the process tree (window end)", :bytes],
        "yjit_code_bytes" => ["YJIT code per worker", :bytes],
        "yjit_ratio" => ["ratio in YJIT", :fraction],
        "constant_invalidations_per_1k_requests" => ["constant cache invalidations per 1,000 requests", :count],
        "class_serial_per_1k_requests" => ["class serial bumps per 1,000 requests", :count],
        "cpu_stall_pct" => ["machine: some task waiting for a CPU (PSI)", :percent],
        "memory_stall_pct" => ["machine: some task waiting for memory (PSI)", :percent],
        "io_stall_pct" => ["machine: some task waiting for I/O (PSI)", :percent]
      }.freeze

      # One figure over the batches: +values+ and their +batches+ (numbers),
      # the Stats::Summary and the interval of the median (nil below
      # min_batches).
      Figure = Struct.new(:name, :values, :batches, :summary, :ci, keyword_init: true) do
        def median = summary.median

        def to_h
          { "median" => summary.median, "mean" => summary.mean, "cv" => summary.cv, "ci95" => ci,
            "per_batch" => values, "batch_numbers" => batches }
        end
      end

      # The summary of +config+'s ok trials (a ConfigSummary), or nil when
      # no ok trial has any inside figure.
      def self.of(config, options)
        summary = new(config.ok_trials, options)
        summary.empty? ? nil : summary
      end

      # The label and format kind of figure +name+.
      def self.label(name) = FIGURES.fetch(name).first

      # +value+ of figure +name+ as the reports write it: "812.4us",
      # "345.2", "1.25 ms", "61.2 MB", "92.10%"; Units::NONE for nil.
      def self.format(name, value)
        return Units::NONE if value.nil?

        case FIGURES.fetch(name).last
        when :us then Units.latency_us(value)
        when :ms then Kernel.format("%.2f ms", value)
        when :bytes then Units.megabytes(value)
        when :fraction then Units.percent(value)
        when :percent then Units.percent(value / 100.0, digits: 1)
        else value >= 100 ? Kernel.format("%.0f", value) : Kernel.format("%.2f", value)
        end
      end

      # The figures of +inside+ (configs.inside of a report document) that
      # some batch has, in FIGURES order: [[name, figure Hash, its compared
      # InsideCompare::Row Hash or nil], ...].
      def self.rows(inside)
        compared = Array(inside.dig("against_baseline", "figures"))
        InsideSummary::FIGURES.keys.filter_map do |name|
          figure = inside.dig("figures", name)
          figure && [name, figure, compared.find { |r| r["name"] == name }]
        end
      end

      attr_reader :figures

      # trials :: the configuration's ok TrialEntry objects, in batch order
      # options :: the Report::Options (confidence, resamples, seed, min_batches)
      def initialize(trials, options)
        @options = options
        @trials = trials
        with_figures = trials.filter_map { |t| (f = t.inside_figures) && [t, f] }
        @batches = with_figures.size
        @figures = FIGURES.keys.to_h do |name|
          pairs = with_figures.filter_map { |t, f| f[name] && [t.batch, f[name]] }
          [name, figure(name, pairs)]
        end
      end

      def empty? = @batches.zero?

      # The Figure named +name+ (nil when no batch has it).
      def [](name)
        @figures[name]
      end

      # Whether a batch's inside document says the agent counted.
      def agent
        @trials.map { |t| t.inside && t.inside["agent"] }.compact.first
      end

      # The noise of the two throughput measures over the batches that have
      # a CPU time: {"batches", "rps_cv", "cpu_us_per_request_cv",
      # "lower_noise" ("cpu_us_per_request", "rps", or nil when a CV is
      # missing or they are equal)}, or nil without CPU times.
      def noise
        cpu = @figures["cpu_us_per_request"]
        return nil unless cpu

        rps = Stats.summary(@trials.select { |t| cpu.batches.include?(t.batch) }.map(&:rps))
        { "batches" => cpu.values.size, "rps_cv" => rps.cv, "cpu_us_per_request_cv" => cpu.summary.cv,
          "lower_noise" => InsideSummary.lower_noise(rps.cv, cpu.summary.cv) }
      end

      # "cpu_us_per_request" when +cpu_cv+ is the smaller, "rps" when
      # +rps_cv+ is, nil when either is missing or they are equal.
      def self.lower_noise(rps_cv, cpu_cv)
        return nil unless rps_cv && cpu_cv && rps_cv != cpu_cv

        cpu_cv < rps_cv ? "cpu_us_per_request" : "rps"
      end

      # Per process of every batch with an inside document:
      # [{"batch", "pid", "role", "warmup_end_pss_bytes", "window_end_pss_bytes"}].
      def memory
        @trials.flat_map do |t|
          InsideFigures.memory_points(t.inside).map { |point| { "batch" => t.batch }.merge(point) }
        end
      end

      # Processes of the trees that gave no counts, over the batches.
      def missing_processes
        @trials.sum { |t| Array(t.inside && t.inside["missing"]).size }
      end

      # The configuration's "inside" entry of the report document
      # (doc/output.md, configs.inside); +baseline+ is the baseline's
      # InsideSummary (nil for none or the baseline itself).
      def to_h(baseline: nil, baseline_id: nil)
        {
          "agent" => agent, "batches" => @batches, "missing_processes" => missing_processes,
          "figures" => @figures.transform_values { |f| f&.to_h }, "noise" => noise, "memory" => memory,
          "baseline_id" => baseline && baseline_id,
          "against_baseline" => baseline && InsideCompare.new(baseline, self, @options).to_h
        }
      end

      private

      def figure(name, pairs)
        return nil if pairs.empty?

        values = pairs.map(&:last)
        ci = if values.size >= @options.min_batches
               Stats.bootstrap_ci(values, statistic: :median, confidence: @options.confidence,
                                          resamples: @options.resamples, seed: @options.seed)
             end
        Figure.new(name: name, values: values, batches: pairs.map(&:first), summary: Stats.summary(values), ci: ci)
      end
    end
  end
end
