# frozen_string_literal: true

require "digest"
require "json"
require "time"

module Rackbench
  module Publish
    # What a store holds, as a dashboard shows it: testbeds (the runs of
    # one experiment on one machine or testbed, which alone make a series:
    # a faster host is not a faster revision), their runs in order, and
    # per configuration and figure a series of the runs' points with its
    # steps (Stats::StepDetection). Built from the experiments' rows and
    # their stored points only, never from trials: a pruned run is drawn
    # like any other.
    class Catalog
      # One run of a testbed: an experiment of the store.
      Run = Struct.new(:id, :created_at, :labels, :status, :failure, :pruned_at, :environment, :digest,
                       keyword_init: true) do
        # What tells revisions apart: runs of one revision (a re-run) are
        # never split by a step.
        def revision_key
          @revision_key ||= revision_key_of
        end

        def revision_key_of
          revisions = labels.revisions.map { |r| r.slice("of", "name", "commit", "diff_digest", "patches") }
          revisions.empty? ? "run #{id}" : JSON.generate(revisions.sort_by { |r| [r["of"], r["name"]] })
        end

        def revision_time = Series.latest_time(labels.revisions.map { |r| r["committed_at"] })

        def to_h
          { "experiment_id" => id, "created_at" => created_at.utc.iso8601, "labels" => labels.to_h,
            "labels_text" => labels.text, "status" => status, "failure" => failure,
            "pruned" => !pruned_at.nil? }
        end

        # What its page data depends on: equal keys, equal documents.
        def key = [id, digest, created_at.to_f, labels.to_h, status, failure, !pruned_at.nil?]
      end

      # The runs of experiment +name+ on one machine (+machine_key+:
      # Report::MachineMatch.key), oldest first, and their series.
      Testbed = Struct.new(:name, :machine_key, :machine, :runs, :series, keyword_init: true) do
        def slug = Publish.slug(name, JSON.generate(machine_key))
        def machine_text = Report::MachineMatch.describe(machine)
        def testbed = machine_key["testbed"]

        # What its runs' part of every page depends on (Site's digests).
        def runs_key
          @runs_key ||= Digest::SHA256.hexdigest(JSON.generate([name, machine_key, runs.map(&:key)]))
        end

        # The dimensions whose values differ among its configurations.
        def varying_dimensions
          @varying_dimensions ||= begin
            dims = series.map(&:dims).uniq
            dims.flat_map(&:keys).uniq.select { |name| dims.map { |d| d[name] }.uniq.size > 1 }
          end
        end
      end

      # One configuration's figure across a testbed's runs: a Point (or
      # nil) per run, the steps found in it and what it knows of its noise.
      Line = Struct.new(:testbed, :config_id, :dims, :figure, :points, :steps, :noise, keyword_init: true) do
        def key
          @key ||= Digest::SHA256.hexdigest(JSON.generate([testbed.name, testbed.machine_key, config_id, figure.name]))
        end
        def config_slug = Publish.slug(config_id)
        def worse = figure.better == :higher ? "down" : "up"

        # What its part of a page depends on, beside its runs' points.
        def key_parts = [config_id, figure.name, steps.map(&:to_h), noise.to_h]
      end

      attr_reader :testbeds

      # store :: an open Store; points :: its Publish::Points (refreshed)
      # settings :: Publish::Settings
      def initialize(store, points, settings)
        @settings = settings
        summaries = points.summaries
        runs = store.experiments.filter_map { |e| run_of(e, summaries[e[:id]]) }
        grouped = runs.group_by { |run, _| [run[:name], run[:key]] }
        all_points = points.for(runs.map { |run, _| run[:run].id })
        @testbeds = grouped.map do |(name, key), members|
          testbed(name, key, members.map(&:first), all_points)
        end
        @testbeds.sort_by! { |t| [t.name, -t.runs.last.created_at.to_f] }
      end

      def lines = @testbeds.flat_map(&:series)

      private

      # {name:, key:, run:} for an experiment summarised as measured or
      # failed, with the labels --where asks for; nil otherwise.
      def run_of(experiment, summary)
        return nil unless summary && summary.status != "empty"

        labels = Labels.from_h(experiment[:labels])
        return nil unless @settings.where.all? { |k, v| labels.given[k] == v }

        created = experiment[:created_at]
        created = Time.parse(created.to_s) unless created.is_a?(Time)
        env = experiment[:environment]
        run = Run.new(id: experiment[:id], created_at: created, labels: labels, status: summary.status,
                      failure: summary.failure, pruned_at: summary.pruned_at, environment: env,
                      digest: summary.digest)
        [{ name: experiment[:name], key: Report::MachineMatch.key(env, testbed: labels.testbed), run: run }]
      end

      def testbed(name, key, members, all_points)
        runs = members.map { |m| m[:run] }.sort_by do |run|
          time = @settings.order == "revision" ? run.revision_time || run.created_at : run.created_at
          [time, run.created_at, run.id]
        end
        testbed = Testbed.new(name: name, machine_key: key, machine: runs.last.environment, runs: runs)
        testbed.series = lines_of(testbed, all_points)
        testbed
      end

      def lines_of(testbed, all_points)
        index = testbed.runs.each_with_index.to_h { |run, i| [run.id, i] }
        by_line = {}
        testbed.runs.each do |run|
          all_points[run.id].each do |point|
            (by_line[[point.config_id, point.figure]] ||= [point.dims, Array.new(testbed.runs.size)])[1][index[run.id]] = point
          end
        end
        figures = @settings.figures.to_h { |f| [f.name, f] }
        # Configurations in the order of the latest run that has them (its
        # report's order), then the figures in the order asked.
        rank = {}
        testbed.runs.reverse_each { |run| all_points[run.id].each { |p| rank[p.config_id] ||= rank.size } }
        by_line.filter_map do |(config_id, figure_name), (dims, points)|
          figure = figures[figure_name]
          next nil unless figure && points.any? { |p| p&.median }

          line = Line.new(testbed: testbed, config_id: config_id, dims: dims, figure: figure, points: points)
          detect(line)
        end.sort_by { |l| [rank[l.config_id], @settings.figures.index(l.figure)] }
      end

      def detect(line)
        medians = line.points.map { |p| p&.median }
        detection = Stats::StepDetection.new(
          medians, intervals: line.points.map { |p| p&.ci }, groups: line.testbed.runs.map(&:revision_key),
                   worse: line.worse,
                   settings: Stats::StepDetection::Settings.new(equivalence: @settings.equivalence_of(line.figure),
                                                                default_threshold: @settings.default_threshold)
        )
        line.steps = detection.steps
        line.noise = detection.noise
        line
      end
    end

    # A file name part made of +parts+: the first's letters, digits, "." and
    # "-" (others become "-"), at most 48 of them, then 8 hex digits of the
    # SHA-256 of all of them, so two names never share a file.
    def self.slug(*parts)
      readable = parts.first.to_s.gsub(/[^A-Za-z0-9.]+/, "-").gsub(/\A[-.]+|-+\z/, "")[0, 48]
      "#{readable.empty? ? "x" : readable}-#{Digest::SHA256.hexdigest(JSON.generate(parts))[0, 8]}"
    end
  end
end
