# frozen_string_literal: true

require "time"

module Rackbench
  class Series
    # One labelled run of the series: a stored experiment, read as a
    # Report, with what it measured (Labels), the machine it ran on and
    # where it came from.
    Run = Struct.new(:report, :location, :labels, :machine, keyword_init: true) do
      def experiment = report.experiment
      def id = experiment[:id]

      def created_at
        t = experiment[:created_at]
        t.is_a?(Time) ? t : Time.parse(t.to_s)
      end

      # When what it measured was committed: the latest commit date of its
      # revisions, or nil without one (then the history orders it by date).
      def revision_time
        Series.latest_time(labels.revisions.map { |r| r["committed_at"] })
      end

      # What identifies its machine (Report::MachineMatch.key), its testbed
      # when labelled with one.
      def machine_key
        @machine_key ||= Report::MachineMatch.key(machine, testbed: labels.testbed)
      end

    end

    # Bootstrap resamples of each run's Report: the history reads its
    # configurations' batches only and computes its own intervals
    # (Series#point), so the report's intervals and comparisons, most of
    # its cost, need not be precise.
    REPORT_RESAMPLES = 100

    # The runs of experiment +name+ stored in the results directories
    # +dirs+ (default: the name of the latest experiment of the first),
    # each read as a Report with +options+ (Report::Options' keywords),
    # keeping those whose labels have every +where+ pair. Raises
    # UsageError when a directory holds no results or none holds a run of
    # the name.
    def self.collect(dirs, name: nil, where: {}, options: {})
      seen = {}
      runs = dirs.flat_map do |dir|
        unless File.exist?(File.join(dir, Store::Connection::DB_FILE))
          raise UsageError, "no results in #{dir} (run an experiment first, or pass --results DIR)"
        end

        Store.open(dir) do |store|
          name ||= store.latest_experiment&.fetch(:name)
          store.experiments.select { |e| e[:name] == name }.filter_map do |e|
            next nil if seen[[store.location, e[:id]]]

            seen[[store.location, e[:id]]] = true
            # Filtered before its report is computed: a long history is
            # mostly runs the --where leaves out.
            next nil unless where.all? { |k, v| Labels.from_h(e[:labels]).given[k] == v }

            report = Report.new(store, experiment_id: e[:id], **options, resamples: REPORT_RESAMPLES)
            Run.new(report: report, location: store.location, labels: report.labels, machine: report.machines.first)
          end
        end
      end
      if runs.empty?
        labels = where.map { |k, v| "#{k}=#{v}" }.join(" ")
        raise UsageError, "no run of experiment '#{name}'#{" labelled #{labels}" unless where.empty?} in #{dirs.join(", ")}"
      end
      runs
    end

    # The latest of ISO 8601 times (nil and unparsable ones left out), or nil.
    def self.latest_time(texts)
      texts.filter_map do |text|
        Time.iso8601(text.to_s)
      rescue ArgumentError
        nil
      end.max
    end
  end
end
