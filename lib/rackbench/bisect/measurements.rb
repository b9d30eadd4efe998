# frozen_string_literal: true

module Rackbench
  module Bisect
    # The commits' measurements, as the Search's oracle: each commit's
    # run is its step experiment (Derivation), run through Runner::Steps
    # into the results directory a few batches at a time (its plan made
    # for the most batches; a batch already stored runs nothing, so a
    # resumed bisection replays every measurement from the store and
    # measures no commit twice), and two commits are compared by Judge
    # over their stored Reports.
    #
    # A commit cannot be measured when its file does not hold (a
    # ConfigError at that commit), its ruby does not build (kept in the
    # Journal: not built again on resume), its gems do not install, nothing
    # of it can run (the plan leaves every configuration out), or a trial
    # of it failed (the server did not boot, the app check failed): the
    # first line of the reason, as the trial stored it.
    class Measurements
      # What is known of one commit: its experiment (nil when it could not
      # be derived), the stored experiment's id, its trials, and why it
      # cannot be measured.
      Entry = Struct.new(:index, :experiment, :experiment_id, :records, :reason, keyword_init: true) do
        def ok_batches = records.select(&:ok?).map(&:batch).uniq.size
        def batches = records.map(&:batch).uniq.size
      end

      attr_reader :history

      # The first failed trial of +records+ in one line ("batch 1 failed:
      # REASON", its first line), or nil when none failed.
      def self.failure(records)
        failed = records.reject(&:ok?)
        return nil if failed.empty?

        reason = failed.first.reason.to_s.lines.map(&:strip).reject(&:empty?).first || "failed"
        "batch #{failed.first.batch} failed: #{reason}"
      end

      # :history :: History
      # :derivation :: Derivation
      # :steps :: Runner::Steps (#run(experiment, through_batch:), #stored(experiment))
      # :store :: the results database, as Store.open takes it
      # :judge :: Judge
      # :journal :: Journal
      # :settings :: Settings
      # :on_build :: called with (index) before a commit's ruby is built (progress)
      # :on_measure :: called with (index, batches) before a commit's batches run (progress)
      # :on_skip :: called with (index, reason) once for each commit that cannot be measured (progress)
      def initialize(history:, derivation:, steps:, store:, judge:, journal:, settings:, on_build: nil, on_measure: nil,
                     on_skip: nil)
        @history = history
        @derivation = derivation
        @steps = steps
        @store = store
        @judge = judge
        @journal = journal
        @settings = settings
        @on_build = on_build
        @on_measure = on_measure
        @on_skip = on_skip
        @skips_said = []
        @entries = {}
        @reports = {}
        @judgements = {}
      end

      # Search's oracle: makes sure commit +index+ has +batches+ batches
      # stored; nil, or why it cannot be measured.
      def measure(index, batches)
        entry = entry(index)
        if entry.reason.nil? && entry.batches < batches
          @on_measure&.call(index, batches)
          run(entry, batches)
        end
        if entry.reason && !@skips_said.include?(index)
          @skips_said << index
          @on_skip&.call(index, entry.reason)
        end
        entry.reason
      end

      # Search's oracle: the commit's ok batches.
      def batches(index)
        @entries[index]&.ok_batches || 0
      end

      # Search's oracle: the verdict of Judge#between.
      def compare(from, to, limit)
        judgement(from, to, limit).verdict
      end

      # The Judgement of commit +to+ against +from+ at +limit+, over what
      # each has stored now.
      def judgement(from, to, limit)
        reports = [report(from), report(to)]
        key = [*reports.map { |r| [r.experiment[:id], r.trials.size] }, limit]
        @judgements[key] ||= @judge.between(*reports, limit)
      end

      # What is known of commit +index+ (measured or not).
      def entry(index)
        @entries[index] ||= new_entry(index)
      end

      # The commits with an entry, in index order.
      def entries
        @entries.values.sort_by(&:index)
      end

      # The Report of commit +index+'s stored run (the settings' options).
      def report(index)
        entry = @entries.fetch(index)
        @reports[[entry.experiment_id, entry.records.size]] ||= Store.open(@store) do |store|
          Report.new(store, experiment_id: entry.experiment_id, **@settings.report_options)
        end
      end

      # Whether +experiment+'s ruby must be built first (its build is not in the cache).
      def building?(experiment)
        experiment.rubies.any? { |ruby| ruby.build && !Rubies::Build::Cache.new.complete?(ruby.build.key) }
      rescue ConfigError
        false
      end

      private

      def new_entry(index)
        experiment = @derivation.commit_experiment(@history[index].sha)
        failed = @journal.failure(experiment)
        entry = Entry.new(index: index, experiment: experiment, records: [], reason: failed)
        return entry if failed

        # Reading what is stored of a ruby's commit builds it first (the
        # build's key is part of the run's identity).
        @on_build&.call(index) if building?(experiment)
        stored(entry)
      rescue ConfigError => e
        Entry.new(index: index, records: [], reason: e.message)
      end

      # The entry with what the store holds of it.
      def stored(entry)
        outcome = guarded(entry) { @steps.stored(entry.experiment) }
        return entry if entry.reason || outcome.nil?

        entry.experiment_id = outcome.experiment_id
        entry.records = outcome.records
        entry.reason = failure(entry.records)
        entry
      end

      # Runs the commit's batches up to +batches+, stopping at its first
      # failed trial (a server that does not boot under valgrind would
      # otherwise take its whole readiness deadline in every batch).
      def run(entry, batches)
        outcome = guarded(entry) { fail_fast(entry) { @steps.run(entry.experiment, through_batch: batches, fail_fast: true) } }
        return if entry.reason

        entry.experiment_id = outcome.experiment_id
        entry.records = outcome.records
        entry.reason = failure(entry.records) || (nothing_ran(entry) if entry.records.empty?)
      end

      # The run's Outcome; when it stopped at a failed trial (the Runner's
      # fail_fast raises), what it stored, failure included. Any other
      # error passes through.
      def fail_fast(entry)
        yield
      rescue Interrupted, UsageError, SetupError
        raise
      rescue Error => e
        stored = @steps.stored(entry.experiment)
        raise e unless stored && failure(stored.records)

        stored
      end

      # Runs the block; a build that fails is kept in the journal, and
      # every setup failure becomes the entry's reason.
      def guarded(entry)
        yield
      rescue BuildError => e
        entry.reason = "its ruby does not build: #{e.message}"
        @journal.record(entry.experiment, @history[entry.index].sha, entry.reason)
        nil
      rescue SetupError => e
        entry.reason = e.message.lines.first.to_s.strip
        nil
      end

      def failure(records) = Measurements.failure(records)

      # Why a run stored nothing: the configurations its plan left out.
      def nothing_ran(entry)
        skipped = @steps.runner(entry.experiment).plan.skipped.map(&:reason).uniq
        "nothing of it can run#{": #{skipped.join("; ")}" unless skipped.empty?}"
      end
    end
  end
end
