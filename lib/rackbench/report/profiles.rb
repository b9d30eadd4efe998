# frozen_string_literal: true

module Rackbench
  class Report
    # The profiles of an experiment's profiled trials, one per
    # configuration: its trials' profiles (one per batch it was profiled
    # in, each its workers' merged) merged again. Profiled trials never
    # reach the statistics (Report keeps them apart): the profiler's cost
    # would lower every figure.
    class Profiles
      TOP_LIMIT = 15

      # One configuration's profile.
      Entry = Struct.new(:config_id, :dims, :trial_keys, :profile, :missing, keyword_init: true) do
        def to_h
          {
            "config_id" => config_id, "dims" => dims, "trials" => trial_keys, "missing" => missing,
            "tool" => profile.tool, "mode" => profile.mode, "interval" => profile.interval,
            "sample_us" => profile.sample_us, "unit" => profile.unit,
            "samples" => profile.samples, "processes" => profile.processes.size,
            "top_self" => top(:self), "top_total" => top(:total), "flame" => Profile::FlameTree.nodes(profile)
          }
        end

        def top(by)
          Profile::TopFrames.call(profile, by: by, limit: TOP_LIMIT).map do |row|
            { "name" => row.name, "file" => row.file, "line" => row.line, "self_samples" => row.self_samples,
              "total_samples" => row.total_samples, "self_share" => row.self_share.round(4),
              "total_share" => row.total_share.round(4) }
          end
        end
      end

      attr_reader :entries

      # trials :: the profiled trials (TrialEntry), any status
      # results_dir :: where their profiles/ are (nil: none can be read)
      def initialize(trials, results_dir)
        ok = trials.select { |t| t.record.ok? }
        @batches = Hash.new { |hash, id| hash[id] = [] }
        @entries = ok.group_by(&:config_id).filter_map do |config_id, group|
          profiles = results_dir ? group.filter_map { |t| read(results_dir, t) } : []
          next if profiles.empty?

          Entry.new(config_id: config_id, dims: group.first.dims, trial_keys: group.map { |t| t.record.key },
                    profile: Profile::Merged.merge(profiles),
                    missing: group.flat_map { |t| Array(Profile.of(t.record)["missing"]) })
        end
      end

      def empty?
        @entries.empty?
      end

      # A configuration's profiled trials one by one, each its profile and
      # its window's requests (ProfileDiff::Batch): [] when it has none.
      def batches(config_id)
        @batches.fetch(config_id, [])
      end

      def to_a
        @entries.map(&:to_h)
      end

      private

      # A trial's profile, kept with its requests for #batches.
      def read(results_dir, trial)
        profile = Profile::Files.read(results_dir, trial.record)
        @batches[trial.config_id] << ProfileDiff::Batch.new(profile, trial.record.result&.fetch("requests", nil)) if profile
        profile
      end
    end
  end
end
