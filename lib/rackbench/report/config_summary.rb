# frozen_string_literal: true

require_relative "flags"
require_relative "entry_summary"
require_relative "entry_text"
require_relative "inside_summary"
require_relative "proxy_figures"
require_relative "service_figures"
require_relative "gem_differences"
require_relative "instructions_summary"
require_relative "instructions_flags"
require_relative "cycles_summary"
require_relative "websocket_figures"

module Rackbench
  class Report
    # One configuration over its batches: throughput statistics with a
    # bootstrap confidence interval, latency percentiles from the merged
    # histograms, errors, memory, flags. Only ok trials count; failed ones
    # are counted and flagged, never averaged in.
    #
    # Its instructions trials (`measure: instructions`, run under valgrind)
    # count in no time figure: they give the instructions per request
    # (InstructionsSummary) and nothing else.
    class ConfigSummary
      PERCENTILES = [50, 90, 99, 99.9].freeze

      attr_reader :trials, :ok_trials, :summary, :rps_ci
      # Set by Baseline: the configuration this one is compared with and
      # the Stats::Comparison (nil for the baseline itself).
      attr_accessor :baseline_config, :comparison

      def initialize(trials, options)
        sorted = trials.sort_by { |t| [t.batch.to_i, t.position.to_i] }
        @all_trials = sorted
        @instruction_trials, @trials = sorted.partition(&:instructions?)
        @ok_trials = @trials.select(&:ok?)
        @options = options
        @summary = Stats.summary(rps_values)
        @rps_ci = if batches >= options.min_batches
                    Stats.bootstrap_ci(rps_values, statistic: :median, confidence: options.confidence,
                                                   resamples: options.resamples, seed: options.seed)
                  end
      end

      def dims = @all_trials.first.dims
      def id = @all_trials.first.config_id
      def batches = @ok_trials.size
      def failed = @trials.size - @ok_trials.size

      # Every trial, time and instructions; the instructions trials alone.
      attr_reader :all_trials, :instruction_trials

      # Whether it has time trials: an experiment that measures only
      # instructions has none.
      def time? = !@trials.empty?

      # Instructions per request over its instructions trials
      # (InstructionsSummary), or nil when it has none.
      def instructions
        return @instructions if defined?(@instructions)

        @instructions = InstructionsSummary.of(@instruction_trials, @options)
      end

      # The configuration's "instructions" entry of the report document,
      # compared with its baseline's when both have instructions.
      def instructions_h = against_baseline(:instructions)

      # Estimated cycles per request over its instructions trials that ran
      # the cache simulation (CyclesSummary), or nil.
      def cycles
        return @cycles if defined?(@cycles)

        @cycles = CyclesSummary.of(@instruction_trials, @options)
      end

      # The configuration's "cycles" entry of the report document.
      def cycles_h = against_baseline(:cycles)
      def rps_median = @summary.median

      # Throughput of each ok batch, in batch order.
      def rps_values
        @ok_trials.map(&:rps)
      end

      # The batch numbers of rps_values, in the same order.
      def batch_numbers
        @ok_trials.map(&:batch)
      end

      def baseline?
        !@baseline_config.nil? && @baseline_config.equal?(self)
      end

      # The dimensions the label shows (set by the report: those that vary).
      attr_writer :label_dimensions

      # A short label: the values of the dimensions that vary, "·"-joined.
      def label
        (@label_dimensions || dims.keys).map { |name| Report.format_dim(dims[name]) }.join(" · ")
      end

      # The merged latency histogram of the ok batches, or nil when none
      # has one.
      def histogram
        return @histogram if defined?(@histogram)

        histograms = @ok_trials.map(&:histogram).compact
        @histogram = histograms.empty? ? nil : Stats::LatencyHistogram.merge(histograms)
      end

      # {"p50", "p90", "p99", "p99_9", "max", "mean"} in µs: the engine's
      # key names, so trials and configurations read alike.
      def latency_us
        histogram&.percentiles_us(PERCENTILES)&.transform_keys { |k| k.tr(".", "_") }
      end

      # Failed requests (transport errors and statuses other than 2xx/3xx)
      # over all attempts of the ok batches together.
      def error_rate
        attempts = @ok_trials.sum(&:attempts)
        attempts.zero? ? nil : @ok_trials.sum(&:failed_requests).fdiv(attempts)
      end

      # The request list's entries over the ok batches (EntrySummary), in
      # file order; nil without a request list.
      def entries
        return @entries if defined?(@entries)

        @entries = EntrySummary.of(@ok_trials, @options)
      end

      # The share of failed requests above which one entry flags the
      # configuration (page_errors): Options#max_error_rate when set, else
      # the built-in app's own max_error_rate (errors allows 10%), else
      # the runner's default, 1%, the limit the trials were judged by.
      def max_error_rate
        @options.max_error_rate || Report.app_max_error_rate(dims["app"])
      end

      def bytes_per_s
        median(@ok_trials.map { |t| t.record.bytes_per_s }.compact)
      end

      # Response bodies in MB (10^6 bytes) per second: each ok batch's, the
      # median, and its bootstrap interval as for rps (nil below
      # min_batches, or when a batch's engine did not count bodies).
      def mb_per_s_values
        @ok_trials.map { |t| t.record.mb_per_s }
      end

      def mb_per_s
        median(mb_per_s_values.compact)
      end

      def mb_per_s_ci
        values = mb_per_s_values
        return nil if batches < @options.min_batches || values.any?(&:nil?)

        @mb_per_s_ci ||= Stats.bootstrap_ci(values, statistic: :median, confidence: @options.confidence,
                                                    resamples: @options.resamples, seed: @options.seed)
      end

      # load.tls: the medians over the ok batches of a full handshake's and
      # a resumed one's mean time (µs), and of the share of the window's
      # responses that waited for a handshake (LoadResult::TlsFigures); nil
      # without TLS.
      def tls_handshake_us = tls_median(:full_handshake_us)
      def tls_resumed_handshake_us = tls_median(:resumed_handshake_us)
      def tls_handshake_share = tls_median(:handshake_share)

      # The load protocol the batches spoke ("http1", "h2c", "h2"), nil without any.
      def protocol
        @trials.map { |t| t.record.protocol }.compact.first
      end

      # Open loop: the median of the batches' offered rates (requests
      # scheduled per second of the window), beside the achieved rps_median;
      # nil in closed loop.
      def offered_rps
        median(@ok_trials.map { |t| t.record.offered_rps }.compact)
      end

      # Peak memory is the largest over the batches: the one a capacity
      # plan has to provide for.
      def ok_records = @ok_trials.map(&:record)

      def rss_peak_bytes = @ok_trials.map { |t| t.record.rss_peak_bytes }.compact.max
      def pss_peak_bytes = @ok_trials.map { |t| t.record.pss_peak_bytes }.compact.max

      # Median throughput per GB (1e9 bytes) of peak PSS (RSS when PSS is
      # unknown): what a fixed memory budget buys.
      def rps_per_gb
        memory = pss_peak_bytes || rss_peak_bytes
        return nil unless memory&.positive? && rps_median

        rps_median / (memory / 1e9)
      end

      # Behind a proxy (ProxyFigures): the cache's hit ratio, the proxy's
      # CPU (cores) and peak memory; nil for a configuration without one.
      def cache_hit_ratio = ProxyFigures.hit_ratio(ok_records)
      def proxy_cpu_cores = ProxyFigures.cpu_cores(ok_records)
      def proxy_memory_peak_bytes = ProxyFigures.memory_peak_bytes(ok_records)
      # The median rate over a day (86,400 x req/s).
      def requests_per_day = ProxyFigures.requests_per_day(rps_median)

      # What the app's services cost (ServiceFigures.of: CPU and memory per
      # service over the windows), or nil for an app without services.
      def services
        return @services if defined?(@services)

        @services = ServiceFigures.of(ok_records)
      end

      # A WebSocket workload's figures (WebsocketFigures): clients
      # connected and asked, seconds until all were, failures by reason
      # over every trial, the round trip's p95, delivery, memory per
      # connection and CPU per broadcast; nil for an HTTP configuration.
      def ws_connected = websocket? ? WebsocketFigures.connected(ok_records) : nil
      def ws_requested = websocket? ? WebsocketFigures.requested(ok_records) : nil
      def ws_time_to_all_s = websocket? ? WebsocketFigures.time_to_all_s(ok_records) : nil
      def ws_connection_failures = WebsocketFigures.connection_failures(@trials.map(&:record))
      def rtt_p95_us = websocket? ? WebsocketFigures.rtt_p95_us(histogram) : nil
      def delivery_ratio = websocket? ? WebsocketFigures.delivery_ratio(ok_records) : nil
      def memory_per_connection_bytes = websocket? ? WebsocketFigures.memory_per_connection_bytes(ok_records) : nil
      def cpu_us_per_broadcast = websocket? ? WebsocketFigures.cpu_us_per_broadcast(ok_records) : nil

      def websocket?
        @websocket = WebsocketFigures.websocket?(@trials.map(&:record)) unless defined?(@websocket)
        @websocket
      end

      # The inside figures over the ok batches (InsideSummary), or nil when
      # no ok batch has one.
      def inside
        return @inside if defined?(@inside)

        @inside = InsideSummary.of(self, @options)
      end

      # The configuration's "inside" entry of the report document: its
      # InsideSummary, compared with its baseline's when both have one.
      def inside_h = against_baseline(:inside)

      def flags
        @flags ||= Flags.new(self, @options, unit: Report.rate_unit(@trials)).to_a
      end

      # The bundle's gems this configuration's servers loaded (name =>
      # version): its first ok trial's (TrialEntry#gems), else any trial's;
      # {} when none has any.
      def gems
        @gems ||= (@ok_trials + @trials).lazy.filter_map(&:gems).first || {}
      end

      # How the native gems of #gems were built (TrialEntry#gem_platforms),
      # from the same trial as #gems; nil when it did not record them.
      def gem_platforms
        return @gem_platforms if defined?(@gem_platforms)

        @gem_platforms = (@ok_trials + @trials).find(&:gems)&.gem_platforms
      end

      # The batches whose servers loaded other versions than #gems:
      # [[batch, GemDifferences.between(gems, the batch's)]].
      def batches_with_other_gems
        @trials.filter_map do |trial|
          differences = trial.gems ? GemDifferences.between(gems, trial.gems) : []
          [trial.batch, differences] unless differences.empty?
        end
      end

      # The gems whose versions differ between this configuration and
      # another of its app (set by the report from GemDifferences.of):
      # name => this configuration's version; {} when none differs.
      attr_writer :differing_gem_names

      def differing_gems
        gems.slice(*Array(@differing_gem_names))
      end

      # What the servers of this configuration really ran, as their identity
      # checks recorded it: one entry per distinct identity (normally one),
      # with the batches that ran it. Empty for trials stored before
      # rackbench checked identities.
      def ran
        @ran ||= @all_trials.select(&:identity).group_by { |t| Ran.key(t.identity) }.map do |key, trials|
          key.merge("batches" => trials.map(&:batch).uniq.sort)
        end
      end

      # The part of an identity record that tells configurations apart.
      module Ran
        def self.key(identity)
          key = {
            "description" => identity["description"], "jit" => identity["jit"],
            "server_gem" => identity["server_gem"], "env" => identity["env"] || {},
            "processes" => Array(identity["processes"]).size
          }
          # A ruby built from source: the build its processes ran, and its recipe.
          recipe = identity.dig("expected", "recipe")
          recipe ? key.merge("build" => identity["build"], "recipe" => recipe) : key
        end

        # One line of a key: "ruby 3.1.2p20, YJIT on, puma 8.0.2, 2 processes; RACK_ENV=production".
        def self.text(ran)
          ruby = ran["description"].to_s.split(" (").first
          jit = ran["jit"] ? "#{ran["jit"].upcase} on" : "no JIT"
          # A script's trials run no server gem.
          gem = ran["server_gem"] && "#{ran["server_gem"]["name"]} #{ran["server_gem"]["version"]}"
          env = ran["env"].map { |k, v| v.nil? ? "#{k} unset" : "#{k}=#{v}" }.join(" ")
          built = ran["recipe"] && "(#{Rubies::Build::Recipe.text(ran["recipe"])})"
          [[ruby, built].compact.join(" "), jit, gem, "#{ran["processes"]} process#{"es" unless ran["processes"] == 1}; #{env}"]
            .compact.join(", ")
        end
      end

      def verdict
        return "baseline" if baseline?
        return "no baseline" unless @comparison

        @comparison.verdict
      end

      # The ratio of this configuration's median to its baseline's: 1 for
      # the baseline itself when it has a throughput, nil without a
      # comparison.
      def ratio
        own_ratio? ? 1.0 : @comparison&.ratio
      end

      # The bootstrap interval of #ratio: [1, 1] for the baseline itself
      # when it has a throughput, nil without an interval.
      def ratio_ci
        own_ratio? ? [1.0, 1.0] : @comparison&.ratio_ci
      end

      # The configuration's entry of the report document: the value of
      # every column of +columns+ (default: Report::Columns::ALL) that the
      # JSON shows. Computed once per table, when the report has set the
      # baseline and comparison, and kept: the terminal, CSV, JSON and HTML
      # views all read it.
      def to_h(columns = Columns::ALL)
        (@to_h ||= {})[columns] ||= Columns.entry(self, columns)
      end

      private

      def tls_median(figure)
        median(@ok_trials.filter_map { |t| LoadResult::TlsFigures.public_send(figure, t.record.tls) })
      end

      # The document of the summary +name+ returns (:inside, :instructions),
      # compared with the baseline's when both have one (not for the
      # baseline itself); nil without one.
      def against_baseline(name)
        own = public_send(name)
        return nil unless own

        base = @baseline_config
        against = base && !base.equal?(self) ? base.public_send(name) : nil
        own.to_h(baseline: against, baseline_id: base&.id)
      end

      # The baseline's ratio to itself is 1, when it has a throughput at all.
      def own_ratio?
        baseline? && batches.positive?
      end

      def median(values)
        values.empty? ? nil : Stats.summary(values).median
      end
    end
  end
end
