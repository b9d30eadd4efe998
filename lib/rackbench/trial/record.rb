# frozen_string_literal: true

require "json"
require_relative "../deep_freeze"
require_relative "../field_equality"

module Rackbench
  module Trial
    # One trial as it happened: a frozen value, built once by its kind,
    # stored as it is and read back the same (Store::RecordCodec), so the
    # runner, the store and the report all hold the same thing.
    #
    # Nothing in it is stored twice. What the trial measured stays in the
    # document that measured it (+result+: the load engine's JSON for an
    # HTTP trial, the benchmark's for a script) and in the sampler's
    # summary (+sample+); the figures the report reads (rps, latency,
    # failed requests, memory) are read from those by the kind's Reading,
    # the one place that knows what they mean.
    #
    # Identity of the trial :: key, batch, position, kind, dims, ruby, server, app, processes, threads
    # Outcome :: status ("ok" or "failed"), reason
    # Timing (s) :: started_at, finished_at (Time), wall_s, boot_s (until the server was ready), stop_s
    # Measurements :: result, sample (Hashes, String keys), machine (MachineLoad)
    # What ran :: ruby_description, identity (Trial::Identity), gem_versions, env, load_settings, layout
    # Inside the server :: inside (the counting agent's document, Trial::Http::Inside; nil when no
    #                      agent ran: script trials, `inside: off`, trials stored before schema 5)
    # Proxy :: proxy (the proxy in front of the server, Proxy::Running#to_h: name, version, its
    #          process tree's sample and its cache's counts over the window; nil without a proxy
    #          and for trials stored before schema 6)
    # Instructions :: instructions (callgrind's counts over the window of an instructions trial:
    #                 per process, in total, per request, and the costliest functions,
    #                 Instructions::Collection; nil for a time trial and for trials stored before schema 10)
    # host :: the host that ran it: the runner's host name, or a fleet
    #         worker's name (nil for trials stored before schema 8)
    # network :: when the load engine ran on a host of its own (load.host):
    #            that host, the server's address and the round trip between
    #            them measured before the trial (Load::RemoteHost#to_h); nil
    #            when the engine ran beside the server
    # Services :: services (the app's services, Services::Running#to_h each: name, version, where it
    #             answered, the restore of its template and the state it left, its process tree's
    #             sample over the window; nil for an app without services and trials stored before
    #             the services' migration)
    # pressure :: the kernel's pressure stall information over the window (the share of it some task
    #             waited for a CPU, memory or I/O: Trial::Http::Companions::Pressure; nil where the
    #             kernel has none and for trials stored before schema 12)
    # websocket :: a WebSocket trial's server idle before the engine started (its process tree's PSS,
    #              RSS and processes after boot: the websocket companion), against which the window's
    #              memory per connection is read; nil for an HTTP trial and trials stored before schema 14
    # log_path :: the trial's log
    # attempt :: which attempt at its key this is: 1, or more for a failure
    #            run again with `--resume --retry-failed` (default: 1)
    class Record
      include FieldEquality
      FIELDS = %i[key batch position kind dims ruby server app processes threads status reason ruby_description
                  started_at finished_at wall_s boot_s stop_s result sample machine identity gem_versions env
                  load_settings layout log_path attempt inside proxy host network instructions services
                  pressure websocket].freeze
      # Fields holding documents (JSON in the store): normalized to String
      # keys and frozen, so a fresh record and one read back are equal.
      DOCUMENTS = %i[dims result sample machine identity gem_versions env load_settings layout inside proxy
                     network instructions services pressure websocket].freeze
      STATUSES = %w[ok failed].freeze

      attr_reader(*FIELDS)

      # Takes every field by name (missing ones are nil). Raises
      # ArgumentError for an unknown field, a missing key or kind, or a bad
      # status: each is a bug in the caller.
      #
      # parsed: true says the documents come straight from
      # JSON.parse(freeze: true) (the store): already normalized and frozen.
      # Times keep microseconds, as the store does.
      def initialize(parsed: false, **fields)
        unknown = fields.keys - FIELDS
        raise ArgumentError, "unknown trial field(s): #{unknown.join(", ")}" unless unknown.empty?

        FIELDS.each do |name|
          value = fields[name]
          value = document(fields[:key], name, value) if DOCUMENTS.include?(name) && !value.nil? && !parsed
          value = value.dup.freeze if value.is_a?(String)
          value = value.floor(6) if value.is_a?(Time)
          value ||= 1 if name == :attempt
          instance_variable_set(:"@#{name}", value)
        end
        check!
        freeze
      end

      def ok?
        status == "ok"
      end

      # The kind's Reading (Trial::Reading): what the figures below mean.
      def reading
        Trial.fetch(kind).reading
      end

      # Throughput in rate_unit ("req/s", or "msg/s" for a micro-benchmark).
      def rate = reading.rate(self)
      def rate_unit = reading.rate_unit(self)
      # Responses (messages) in the measured window.
      def requests = reading.requests(self)
      # Failed requests in the window: transport errors and statuses other
      # than 2xx/3xx; and all the attempts (responses + transport errors).
      def failed_requests = reading.failed_requests(self)
      def attempts = reading.attempts(self)

      def error_rate
        total = attempts
        total.nil? || total.zero? ? nil : failed_requests.to_i.fdiv(total)
      end

      def latency_us = reading.latency_us(self)
      def histogram = reading.histogram(self)
      def measure_s = reading.measure_s(self)
      def warmup_s = reading.warmup_s(self)
      def rss_peak_bytes = reading.rss_peak_bytes(self)
      def pss_peak_bytes = reading.pss_peak_bytes(self)
      def cpu_user_s = reading.cpu_user_s(self)
      def cpu_system_s = reading.cpu_system_s(self)
      def timeline = reading.timeline(self)
      def warmup_timeline = reading.warmup_timeline(self)
      def warmup = reading.warmup(self)
      def bytes_per_s = reading.bytes_per_s(self)
      def mb_per_s = reading.mb_per_s(self)
      def protocol = reading.protocol(self)
      def offered_rps = reading.offered_rps(self)
      def tls = reading.tls(self)

      # A copy with +changes+ (fields by name), e.g. with(attempt: 2).
      def with(**changes)
        documents = changes.slice(*DOCUMENTS).compact.to_h { |name, value| [name, document(key, name, value)] }
        Record.new(parsed: true, **to_h.merge(changes, documents))
      end

      def inspect
        "#<#{self.class.name} #{kind} #{key} #{status}#{" #{reason.to_s.lines.first&.strip}" if reason}>"
      end

      private

      # A document as the store gives it back: through JSON (String keys,
      # no Symbols or NaN), frozen.
      def document(key, name, value)
        DeepFreeze.call(JSON.parse(JSON.generate(value)))
      rescue JSON::GeneratorError => e
        raise ArgumentError, "trial #{key}: #{name} cannot be stored as JSON (#{e.message.lines.first.strip})"
      end

      def check!
        raise ArgumentError, "a trial record needs a key" unless key.is_a?(String) && !key.empty?
        raise ArgumentError, "trial #{key}: no kind" unless kind.is_a?(String) && !kind.empty?
        raise ArgumentError, "trial #{key}: attempt is #{attempt.inspect}" unless attempt.is_a?(Integer) && attempt >= 1
        return if STATUSES.include?(status)

        raise ArgumentError, "trial #{key}: status is #{status.inspect}, expected one of #{STATUSES.join(", ")}"
      end
    end
  end
end
