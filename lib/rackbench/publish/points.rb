# frozen_string_literal: true

require "digest"
require "json"

module Rackbench
  module Publish
    # Each run's figures, summarised once and kept in the store: per
    # configuration and figure the median over its ok batches, its
    # interval, the batches and failed trials, and each batch's value
    # (series_points), with what they were computed from (run_summaries).
    # A run is summarised again only when its trials changed (a resumed
    # run, a retried failure) or the settings did; a pruned run never is:
    # its points are all that is left of it (Publish::Retention).
    #
    # The interval is the percentile bootstrap of the median, as `history`
    # draws it, computed exactly (Stats.median_interval): a year of nightly
    # runs holds tens of thousands of them.
    #
    #   points = Publish::Points.new(store, settings)
    #   points.refresh   # => number of runs summarised now
    #   points.for(experiment_ids) # => {id => [Point, ...]}
    class Points
      # Bumped when what a point holds changes: every run is summarised again.
      VERSION = 1

      # One run's figure for one configuration (a row of series_points).
      # Its dims and batch values stay JSON until asked for: a year of
      # points is read at every publish, and its timelines need neither.
      class Point
        attr_reader :experiment_id, :config_id, :figure, :median, :ci, :batches, :failed

        def initialize(row)
          @experiment_id = row[:experiment_id]
          @config_id = row[:config_id]
          @figure = row[:figure]
          @median = row[:median]
          @ci = row[:ci_low] && [row[:ci_low], row[:ci_high]]
          @batches = row[:batches]
          @failed = row[:failed]
          @dims_json = row[:dims]
          @values_json = row[:batch_values]
        end

        def dims = @dims ||= JSON.parse(@dims_json || "{}")
        def values = @values ||= JSON.parse(@values_json || "[]")

        def to_h
          { "config_id" => config_id, "figure" => figure, "median" => median, "ci" => ci, "batches" => batches,
            "failed" => failed, "values" => values }
        end
      end

      # What a run came to: "measured" (it has trials), "failed" (none, and
      # a failure recorded: a build that failed) or "empty" (none yet).
      # +digest+: what its points were computed from (equal digests, equal points).
      Summary = Struct.new(:experiment_id, :status, :failure, :pruned_at, :digest, keyword_init: true)

      # store :: an open Store
      # settings :: Publish::Settings (figures, confidence, min_batches)
      def initialize(store, settings)
        @store = store
        @db = store.db
        @settings = settings
      end

      # Summarises every run whose summary is missing or stale (of +only+,
      # experiment ids, when given); returns how many it summarised.
      # +progress+ is called with (done, total).
      def refresh(progress: nil, only: nil)
        stale = stale_experiments
        stale = stale.select { |id, _| only.include?(id) } if only
        stale.each_with_index do |(id, digest), i|
          summarise(id, digest)
          progress&.call(i + 1, stale.size)
        end
        stale.size
      end

      # {experiment id => Summary} of every summarised run.
      def summaries
        @db[:run_summaries].all.to_h do |row|
          [row[:experiment_id], Summary.new(experiment_id: row[:experiment_id], status: row[:status],
                                            failure: row[:failure] && JSON.parse(row[:failure]),
                                            pruned_at: row[:pruned_at], digest: row[:source_digest])]
        end
      end

      # {experiment id => [Point, ...]} for +ids+, in the order stored (the
      # report's order of configurations, then the figures').
      def for(ids)
        found = Hash.new { |hash, id| hash[id] = [] }
        ids.each_slice(500) do |slice|
          @db[:series_points].where(experiment_id: slice).order(:id).each do |row|
            found[row[:experiment_id]] << Point.new(row)
          end
        end
        found
      end

      private

      # [[id, digest]] of the runs to summarise: their trials (count, last
      # id, earlier attempts) or the settings changed since, and not pruned.
      def stale_experiments
        trials = @db[:trials].group(:experiment_id)
                             .select(:experiment_id, Sequel.function(:count, :id).as(:trials), Sequel.function(:max, :id).as(:last))
                             .to_hash(:experiment_id, %i[trials last])
        history = @db[:trial_history].group_and_count(:experiment_id).to_hash(:experiment_id, :count)
        failed = @db[:runs].where(status: "failed").select_map(:experiment_id).uniq
        known = @db[:run_summaries].select_hash(:experiment_id, %i[source_digest pruned_at])
        @db[:experiments].order(:id).select_map(:id).filter_map do |id|
          stored_digest, pruned_at = known[id]
          next nil if pruned_at

          digest = digest(trials[id], history[id], failed.include?(id))
          digest == stored_digest ? nil : [id, digest]
        end
      end

      def digest(trials, history, failed)
        Digest::SHA256.hexdigest(JSON.generate([VERSION, @settings.points_key, trials, history, failed]))[0, 32]
      end

      def summarise(id, digest)
        records = @store.trials(id)
        status = if records.any? then "measured"
                 elsif failure(id) then "failed"
                 else "empty"
                 end
        rows = status == "measured" ? rows_of(id, records) : []
        @db.transaction do
          @db[:series_points].where(experiment_id: id).delete
          @db[:series_points].multi_insert(rows)
          @db[:run_summaries].where(experiment_id: id).delete
          @db[:run_summaries].insert(experiment_id: id, source_digest: digest, status: status,
                                     failure: (f = failure(id)) && JSON.generate(f), computed_at: Time.now)
        end
      end

      # What a run that measured nothing recorded as its failure (its failed
      # run's environment, Publish::FailedRun), or nil.
      def failure(id)
        @failures ||= {}
        return @failures[id] if @failures.key?(id)

        run = @store.runs(id).reverse.find { |r| r[:status] == "failed" && r[:environment].is_a?(Hash) }
        @failures[id] = run && run[:environment]["failure"]
      end

      # One row per configuration and figure: every figure the
      # configuration has values of, and for a configuration whose every
      # trial failed, one per figure asked for (the timeline marks it).
      def rows_of(id, records)
        options = Report::Options.new(resamples: 100)
        entries = records.map { |r| Report::TrialEntry.new(r) }.reject { |t| Profile.profiled?(t.record) }
        entries.group_by(&:config_id).flat_map do |config_id, trials|
          config = Report::ConfigSummary.new(trials, options)
          measured = trials.any? { |t| t.record.ok? }
          failed = trials.count { |t| !t.record.ok? }
          @settings.figures.filter_map do |figure|
            values = figure.of(config)
            next nil if values.nil? && measured

            row(id, config_id, figure, trials.first.dims, values || [], failed)
          end
        end
      end

      def row(id, config_id, figure, dims, values, failed)
        ci = values.size >= @settings.min_batches ? Stats.median_interval(values, confidence: @settings.confidence) : nil
        { experiment_id: id, config_id: config_id, figure: figure.name, dims: JSON.generate(dims),
          median: values.empty? ? nil : Stats.median(values), ci_low: ci&.first, ci_high: ci&.last,
          batches: values.size, failed: failed, batch_values: JSON.generate(values) }
      end
    end
  end
end
