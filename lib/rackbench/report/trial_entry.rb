# frozen_string_literal: true

module Rackbench
  class Report
    # One stored trial as the report sees it: its Trial::Record, grouped
    # into a configuration by its dims. The figures are the record's (its
    # kind's Reading): nothing is recomputed here.
    class TrialEntry
      attr_reader :record

      # record :: a Trial::Record from Store#trials
      def initialize(record)
        @record = record
      end

      def dims = @record.dims || {}
      def batch = @record.batch
      def position = @record.position
      def rps = @record.rate
      def reason = @record.reason
      def identity = @record.identity
      def machine = @record.machine
      def warmup = @record.warmup
      def histogram = @record.histogram
      def attempts = @record.attempts.to_i
      def failed_requests = @record.failed_requests.to_i

      # The counting agent's document (doc/output.md, store schema 5), or
      # nil: no agent ran, or a record stored before it existed.
      def inside = @record.inside

      # An instructions trial's counts (Instructions::Collection's
      # document), or nil: a time trial, or a record stored before them.
      def instructions = @record.instructions

      # Whether it ran under valgrind (`measure: instructions`).
      def instructions? = Instructions.trial?(@record)

      # The bundle's gems its servers loaded (name => version): what its
      # identity check recorded, else (a trial stored before the agent
      # reported gems) the lock stored with it, minus Bundler; nil for a
      # trial without a bundle (a benchmark script).
      def gems
        loaded = identity.is_a?(Hash) ? identity["gems"] : nil
        return loaded if loaded.is_a?(Hash)

        locked = @record.gem_versions
        locked.is_a?(Hash) ? locked.except("bundler") : nil
      end

      # How the native gems its servers loaded were built (name => "ruby"
      # for compiled from source on its ruby, else the precompiled gem's
      # platform), as its identity check recorded them; nil for a trial
      # without a bundle or stored before the agent reported platforms.
      def gem_platforms
        platforms = identity.is_a?(Hash) ? identity["gem_platforms"] : nil
        platforms.is_a?(Hash) ? platforms : nil
      end

      # The trial's derived inside figures (InsideFigures), or nil.
      def inside_figures
        return @inside_figures if defined?(@inside_figures)

        @inside_figures = InsideFigures.of(@record)
      end

      # An ok trial with a throughput to count: a record stored "ok" without
      # a positive rate (damaged or hand-edited data) is left out like a
      # failure.
      def ok?
        @record.ok? && rps.is_a?(Numeric) && rps.positive? && rps.finite?
      end

      # The kind's result document ({} when there is none): the engine's
      # figures the flags look at (cpu, late).
      def engine = @record.result || {}

      # The engine's per-entry results of a request list (doc/output.md,
      # "entries"), or nil: a single URL, or a result stored before the
      # engine counted entries.
      def entries
        list = engine["entries"]
        list.is_a?(Array) ? list : nil
      end

      # Which connection slots the server served in the window (the
      # engine's "service"), or nil for a result stored before it was counted.
      def service
        value = engine["service"]
        value.is_a?(Hash) ? value : nil
      end

      # The configuration's text id: "ruby=ruby server=puma app=rack-hello
      # processes=1 threads=4" (dims in the experiment's order).
      def config_id
        @config_id ||= Report.config_id(dims)
      end

      # Requests completed per second of the measured window, gaps (seconds
      # without a response) filled with 0, for the warmup check.
      def requests_per_second
        timeline = @record.timeline || []
        return [] if timeline.empty?

        counts = Array.new(timeline.map { |s| s["second"] }.max + 1, 0)
        timeline.each { |s| counts[s["second"]] = s["requests"] }
        counts
      end

      def to_h
        r = @record
        {
          "key" => r.key, "position" => r.position, "batch" => r.batch, "config_id" => config_id,
          "ruby" => r.ruby, "server" => r.server, "app" => r.app, "processes" => r.processes,
          "threads" => r.threads, "dims" => dims, "status" => r.status, "reason" => r.reason,
          "rps" => r.rate, "requests" => r.requests, "errors" => r.failed_requests, "error_rate" => r.error_rate,
          "bytes_per_s" => r.bytes_per_s, "latency_us" => r.latency_us,
          "rss_peak_bytes" => r.rss_peak_bytes, "pss_peak_bytes" => r.pss_peak_bytes,
          "warmup_s" => r.warmup_s, "measure_s" => r.measure_s, "warmup" => warmup,
          "offered_rps" => r.offered_rps, "load" => r.load_settings, "identity" => identity, "machine" => machine,
          "timeline" => timeline(r.timeline), "warmup_timeline" => timeline(r.warmup_timeline),
          "inside" => inside_figures, "proxy" => r.proxy, "service" => service, "probes" => engine["probes"],
          "measure" => instructions? ? "instructions" : "time",
          "instructions" => instructions&.slice("requests", "instructions", "per_request", "processes"),
          "services" => r.services, "pressure" => r.pressure
        }
      end

      private

      TIMELINE_KEYS = %w[second requests errors bytes p50_us p99_us].freeze
      private_constant :TIMELINE_KEYS

      def timeline(entries)
        (entries || []).map { |s| s.slice(*TIMELINE_KEYS) }
      end
    end

    # "ruby=ruby server=puma processes=1": the text id of a configuration,
    # from its dims in their stored order.
    def self.config_id(dims)
      dims.map { |name, value| "#{name}=#{format_dim(value)}" }.join(" ")
    end

    # The share of failed requests above which a trial of app +name+ was
    # recorded as failed: a built-in app's own max_error_rate (the errors
    # app allows 10%), else the runner's default (Trial::Http::MAX_ERROR_RATE).
    # Your own app's name that a built-in app also has reads the built-in's.
    def self.app_max_error_rate(name)
      app = name && Apps.names.include?(name.to_s) ? Apps.builtin(name.to_s) : nil
      app&.max_error_rate || Trial::Http::MAX_ERROR_RATE
    end

    def self.format_dim(value)
      case value
      when nil then "null"
      when Float then value == value.round ? value.round.to_s : value.to_s
      else value.to_s
      end
    end
  end
end
