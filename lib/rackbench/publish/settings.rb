# frozen_string_literal: true

module Rackbench
  module Publish
    # What `rackbench publish` was asked, checked once.
    #
    # :figures :: the Report::BatchFigures published and tracked (default:
    #             DEFAULT_FIGURES: each only where a run measured it)
    # :confidence :: of every run's interval (default: 0.95)
    # :min_batches :: ok batches a run needs for an interval (default: 5, the report's)
    # :equivalence :: a step smaller than this is no step (default: 1%, the report's)
    # :instructions_equivalence :: the same for instructions per request (default: 0.1%)
    # :default_threshold :: what a series flags before it has learned its
    #                       noise: the gate's default limit (default: 2%)
    # :order :: runs in order of "date" or "revision" (default: "date")
    # :where :: label pairs a run must have (default: {})
    # :url :: where the site will be served, for the feed's links (default: nil: relative)
    # :title :: the site's title (default: "rackbench")
    Settings = Struct.new(:figures, :confidence, :min_batches, :equivalence, :instructions_equivalence,
                          :default_threshold, :order, :where, :url, :title, keyword_init: true) do
      def initialize(figures: DEFAULT_FIGURES, confidence: 0.95, min_batches: 5, equivalence: 0.01,
                     instructions_equivalence: 0.001, default_threshold: nil, order: "date", where: {}, url: nil,
                     title: "rackbench")
        figures = figures.map { |f| f.is_a?(String) ? Report::BatchFigures.fetch(f) : f }.uniq(&:name)
        raise UsageError, "--figures names no figure" if figures.empty?
        raise UsageError, "--order is date or revision, not '#{order}'" unless Series::ORDERS.include?(order)

        default_threshold ||= Gate::Rule.parse(Gate::DEFAULT_RULES.first).limit
        super
        # Checked as the report checks them (UsageError naming the value).
        Report::Options.new(confidence: confidence, min_batches: min_batches, equivalence: equivalence,
                            instructions_equivalence: instructions_equivalence)
        freeze
      end

      # What the stored points depend on: another value summarises every run again.
      def points_key = [figures.map(&:name), confidence, min_batches]

      # The equivalence band of +figure+.
      def equivalence_of(figure) = figure.instructions ? instructions_equivalence : equivalence
    end

    # What a dashboard shows unless told: throughput, the tail, the
    # server's CPU and memory per request, and instructions, each where a
    # run measured it. The other figures (p50, p90, p99.9, allocations)
    # are one --figures away.
    DEFAULT_FIGURES = %w[rps p99 cpu memory instructions].freeze
  end
end
