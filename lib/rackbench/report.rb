# frozen_string_literal: true

require "time"
require_relative "report/options"
require_relative "report/config_order"
require_relative "report/config_summary"
require_relative "report/columns"
require_relative "report/baseline"
require_relative "report/trial_entry"
require_relative "report/history"
require_relative "report/inside_noise"
require_relative "report/profiles"
require_relative "report/concurrency_sweep"
require_relative "report/batch_figures"
require_relative "report/machine_match"
require_relative "report/hosts"
require_relative "report/gem_notes"
require_relative "report/diffs"

module Rackbench
  # The statistics report of one stored experiment: its trials grouped into
  # configurations (trials with the same dims, one per batch), each
  # summarised over its ok batches and compared with its baseline. The
  # document (#to_h, "rackbench-report" format_version 2, doc/output.md)
  # feeds every view: the terminal table (Report::Terminal), CSV
  # (Report::Csv), JSON and the HTML page (HtmlReport).
  #
  #   Rackbench::Store.open("rackbench-results") do |store|
  #     report = Rackbench::Report.new(store, baseline: "ruby=ruby-3.1")
  #     puts report.terminal_table
  #   end
  class Report
    FORMAT = "rackbench-report"
    FORMAT_VERSION = 2

    attr_reader :experiment, :options, :configs, :trials
    # The experiment's runs as stored (Store#runs: each with its machine's
    # :environment).
    attr_reader :runs
    # The trials' earlier attempts (Report::History): failures run again.
    attr_reader :history
    # Where the trials were read from (the results database's path).
    attr_reader :store_location
    # The profiled trials (TrialEntry), kept out of every statistic, and
    # their profiles per configuration (Report::Profiles).
    attr_reader :profiled_trials, :profiles

    # store :: an open Store
    # :experiment_id :: which experiment (default: the latest, or the latest named :name)
    # :name :: experiment name whose latest run to report (default: any)
    # :through_batch :: only the trials of batches up to this one (a --detect run's pilot)
    #                    (default: nil: all)
    # Other options are Report::Options' (baseline, equivalence, detect,
    # confidence, resamples, seed).
    def initialize(store, experiment_id: nil, name: nil, through_batch: nil, **options)
      @options = Options.new(**options)
      @store_location = store.location
      @experiment = find_experiment(store, experiment_id, name)
      @runs = store.runs(@experiment[:id])
      records = store.trials(@experiment[:id])
      records = records.select { |record| record.batch.to_i <= through_batch } if through_batch
      # A profiled trial measured a server slowed by its profiler: it
      # counts in no figure, only its profile is reported.
      @profiled_trials, @trials = records.map { |record| TrialEntry.new(record) }
                                         .partition { |trial| Profile.profiled?(trial.record) }
      @profiles = Profiles.new(@profiled_trials, results_dir)
      @history = History.new(store.earlier_attempts(@experiment[:id], result: false))
      @configs = build_configs
      @configs.each { |c| c.label_dimensions = dimensions }
      differing = Hash.new { |hash, id| hash[id] = [] }
      gem_differences.each { |entry| entry["versions"].each { |v| v["configs"].each { |id| differing[id].concat(entry["gems"]) } } }
      @configs.each { |c| c.differing_gem_names = differing[c.id] }
      Baseline.new(@configs, @options).apply
      @configs.each(&:to_h) # computes every statistic now (ConfigSummary keeps them), so bad data fails here
      @detect = detect_outcome(store, through_batch)
    rescue ArgumentError => e
      # Stats raise ArgumentError for data no ok trial can hold (a histogram
      # whose counts do not add up, a null in a timeline): the database was
      # damaged or written by hand.
      raise Error, "cannot compute the report of experiment #{@experiment&.fetch(:name, nil).inspect} " \
                   "from #{store.location}: #{e.message.lines.first.strip}"
    end

    # The machine's warnings when the experiment started and when each run
    # of it (a --resume) started: [{"at" => "experiment"|"run N", "message"}].
    # Every view shows them: they say how far to trust every figure.
    def warnings
      @warnings ||= begin
        at_start = Array((@experiment[:environment] || {})["warnings"]).map { |w| { "at" => "experiment", "message" => w } }
        experiment_env = @experiment[:environment]
        runs = @runs.each_with_index.flat_map do |run, i|
          # The run that created the experiment stored the same capture.
          next [] if run[:environment].nil? || run[:environment] == experiment_env

          Array(run[:environment]["warnings"]).map { |w| { "at" => "run #{i + 1}", "message" => w } }
        end
        at_start + runs
      end
    end

    # What the run measured (Labels): the --label pairs and the git
    # revisions stored with the experiment; empty for one stored without.
    def labels
      @labels ||= Labels.from_h(@experiment[:labels])
    end

    # The machine the experiment ran on, and each run of it (the stored
    # environments, MachineEnv.capture and what the runner added), oldest
    # first, without repeats: one entry unless a --resume ran elsewhere.
    def machines
      [@experiment[:environment], *@runs.map { |run| run[:environment] }].compact.uniq
    end

    # The dimensions that vary across this experiment's configurations, in
    # the experiment's order (ruby, server, app, processes, threads, then
    # load.* and env.*).
    def dimensions
      @dimensions ||= begin
        names = @configs.flat_map { |c| c.dims.keys }.uniq
        varying = names.select { |name| @configs.map { |c| c.dims[name] }.uniq.size > 1 }
        varying.empty? ? names.first(1) : varying
      end
    end

    # What differs between the configurations of each app in the gems
    # their servers loaded (Report::GemDifferences.of): [] when nothing does.
    def gem_differences
      @gem_differences ||= GemDifferences.of(@configs)
    end

    # What differs between the configurations of each app in how their
    # gems were built or bundled, at one version (Report::GemNotes): notes,
    # not flags; [] when nothing does.
    def gem_notes
      @gem_notes ||= GemNotes.of(@configs)
    end

    # What throughput counts: the unit of its trials' kind ("req/s", or
    # "msg/s" for a micro-benchmark).
    def rate_unit
      Report.rate_unit(@trials)
    end

    # The rate unit the records of +trials+ (TrialEntry) share, "req/s"
    # when there are none; units that differ (WebSocket workloads: msg/s
    # and conn/s) are named together.
    def self.rate_unit(trials)
      units = trials.map { |t| t.record.rate_unit }.uniq
      units.empty? ? "req/s" : units.join(" or ")
    end

    # The config whose id (or label) is +text+, or nil.
    def config(text)
      @configs.find { |c| c.id == text || c.label == text }
    end

    # What the --detect run achieved (Detect::Outcome: the power per
    # comparison, or that its budget was too small), or nil when the
    # experiment was not run with --detect.
    attr_reader :detect

    # The Detect::Settings of the latest run of the experiment that stored
    # some (`rackbench run --detect`: its environment's "detect"), else of
    # the experiment's own environment, else nil.
    def detect_settings
      environments = [@experiment[:environment], *@runs.map { |run| run[:environment] }]
      latest = environments.reverse.find { |env| env.is_a?(Hash) && env["detect"] }
      latest && Detect::Settings.from_h(latest["detect"])
    end

    def to_h
      {
        "format" => FORMAT, "format_version" => FORMAT_VERSION,
        "generated_at" => Time.now.utc.iso8601, "rackbench_version" => Rackbench::VERSION,
        "experiment" => experiment_hash,
        "settings" => @options.to_h.merge("baseline" => @configs.find(&:baseline?)&.id),
        "dimensions" => dimensions, "rate_unit" => rate_unit,
        "configs" => @configs.map(&:to_h),
        "gem_differences" => gem_differences,
        "gem_notes" => gem_notes,
        "inside_noise" => inside_noise,
        "trials" => @trials.map { |t| trial_hash(t) }
      }.tap do |document|
        document["profiles"] = @profiles.to_a unless @profiles.empty?
        document["diffs"] = diffs.map(&:to_h) unless diffs.empty?
        document["concurrency_sweep"] = concurrency_sweep if concurrency_sweep
        document["detect"] = @detect&.to_h
        document["hosts"] = hosts.map(&:to_h)
      end
    end

    # Where the time went between each configuration and its baseline
    # (Report::Diffs: functions, call trees, profiles, allocations), for
    # the configurations whose stored trials allow one; [] else.
    def diffs
      @diffs ||= @configs.filter_map do |config|
        base = config.baseline_config
        next if base.nil? || base.equal?(config)

        Diffs.between(base, config, @options, a_profiles: @profiles, b_profiles: @profiles)
      end
    end

    # Per-host figures when the trials ran on several hosts (a fleet), each
    # flagged when it stands apart from the rest (Report::Hosts); [] else.
    def hosts
      @hosts ||= Hosts.of(@trials, @options)
    end

    # Latency and throughput against load.connections per configuration
    # without it (Report::ConcurrencySweep), or nil when connections is not
    # a dimension of this report.
    def concurrency_sweep
      return @concurrency_sweep if defined?(@concurrency_sweep)

      @concurrency_sweep = ConcurrencySweep.of(@configs, dimensions)
    end

    # Which of server CPU µs per request and requests/s was the lower-noise
    # measure over this run's configurations (Report::InsideNoise), or nil
    # when no configuration has both.
    def inside_noise
      InsideNoise.of(@configs.map { |c| c.to_h["inside"] })
    end

    def terminal_table(color: false, width: nil)
      Terminal.new(self, color: color, width: width).render
    end

    def to_csv
      Csv.new(self).render
    end

    # The per-entry CSV of a request list (Report::EntriesCsv).
    def to_csv_pages
      EntriesCsv.new(self).render
    end

    # One CSV row per function and profile frame of every diff
    # (Report::DiffsCsv).
    def to_csv_diffs
      DiffsCsv.new(diffs.map(&:to_h)).render
    end

    # Writes the HTML report to +path+ (HtmlReport#write).
    # :profile_html :: the inside section's profile hook, a Proc given a
    #                  configuration entry and returning its profile's HTML
    #                  or nil (HtmlReport::InsideSection) (default: nil)
    def write_html(path, profile_html: nil)
      HtmlReport.new(to_h, profile_html: profile_html).write(path)
    end

    private

    # The results directory of a store in a file (profiles/ beside it).
    def results_dir
      File.dirname(@store_location) if @store_location.is_a?(String) && File.file?(@store_location)
    end

    # The report of the pilot batches (the same baseline) gives what the
    # pilot said each comparison needed. Not for a report that is itself
    # cut at a batch (the pilot's own).
    def detect_outcome(store, through_batch)
      settings = through_batch.nil? && detect_settings
      return nil unless settings

      pilot = Report.new(store, experiment_id: @experiment[:id], through_batch: settings.pilot_batches,
                                baseline: @options.baseline || settings.baseline,
                                resamples: Detect::Stopping::PILOT_RESAMPLES)
      Detect::Outcome.new(@configs, pilot.configs, settings)
    end

    def find_experiment(store, experiment_id, name)
      found = experiment_id ? store.experiment(experiment_id) : store.latest_experiment(name: name)
      return found if found

      what = experiment_id ? "with id #{experiment_id} " : (name ? "named '#{name}' " : "")
      raise UsageError, "no experiment #{what}in #{store.location}: run one with rackbench run"
    end

    def build_configs
      groups = @trials.group_by(&:config_id)
      order = ConfigOrder.new(@experiment[:source_text], groups.values.map { |t| t.first.dims },
                              config_keys: @experiment[:config_keys])
      groups.values.sort_by { |t| order.rank(t.first.dims) }.map do |trials|
        ConfigSummary.new(trials, @options)
      end
    end

    # A trial's entry, with which attempt at its key it is and the earlier
    # attempts (retried failures), oldest first.
    def trial_hash(trial)
      record = trial.record
      trial.to_h.merge("attempt" => record.attempt, "earlier_attempts" => @history.for_key(record.key),
                       "host" => record.host, "network" => record.network)
    end

    def experiment_hash
      e = @experiment
      {
        "id" => e[:id], "name" => e[:name], "fingerprint" => e[:fingerprint], "seed" => e[:seed],
        "batches" => e[:batches], "created_at" => iso(e[:created_at]), "finished_at" => iso(e[:finished_at]),
        "rackbench_version" => e[:rackbench_version], "source_text" => e[:source_text],
        "environment" => e[:environment], "warnings" => warnings, "labels" => e[:labels]
      }
    end

    def iso(time)
      time.is_a?(Time) ? time.utc.iso8601 : time
    end
  end
end

require_relative "report/terminal"
require_relative "report/csv"
require_relative "report/entries_csv"
require_relative "report/diffs_csv"
require_relative "report/compare"
