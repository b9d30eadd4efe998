# frozen_string_literal: true

require "json"

module Rackbench
  class Store
    # Maps a trial between the Hash the runner builds and the row in the
    # +trials+ table: which attributes exist, which are stored as JSON text,
    # and the subset `rackbench report --json` needs. Pure functions, no I/O.
    module TrialRow
      # Attributes save_trial accepts (every trials column but the ids).
      SCALAR_COLUMNS = %i[
        key batch position ruby ruby_description server app processes threads
        status reason started_at finished_at boot_s warmup_s measure_s wall_s stop_s
        rps requests errors error_rate rss_peak_bytes pss_peak_bytes
        cpu_user_s cpu_system_s log_path
      ].freeze
      # Stored as JSON text so any engine or sampler document fits unchanged.
      JSON_COLUMNS = %i[dims load_settings env latency_us engine_result sampler gem_versions layout identity
                        machine].freeze
      COLUMNS = (SCALAR_COLUMNS + JSON_COLUMNS).freeze
      STATUSES = %w[ok failed].freeze

      # What `rackbench report --json` shows per trial (doc/store.md).
      REPORT_COLUMNS = %i[
        key batch position ruby server app processes threads dims status reason
        rps error_rate latency_us rss_peak_bytes pss_peak_bytes
      ].freeze

      module_function

      # The row to insert for +attrs+ (a Hash with Symbol or String keys).
      # Raises ArgumentError for an unknown attribute, a missing key, a bad
      # status or a value JSON cannot hold: each is a bug in the caller, and
      # storing it anyway would poison every later report.
      def encode(experiment_id, attrs)
        attrs = attrs.transform_keys(&:to_sym)
        unknown = attrs.keys - COLUMNS
        raise ArgumentError, "unknown trial attribute(s): #{unknown.join(", ")}" unless unknown.empty?

        key = attrs[:key]
        raise ArgumentError, "trial attribute key must be a non-empty String" unless key.is_a?(String) && !key.empty?
        unless STATUSES.include?(attrs[:status])
          raise ArgumentError, "trial #{key}: status is #{attrs[:status].inspect}, expected one of #{STATUSES.join(", ")}"
        end

        row = { experiment_id: experiment_id }
        attrs.each do |name, value|
          row[name] = JSON_COLUMNS.include?(name) ? dump(key, name, value) : value
        end
        row
      end

      # The Hash for a stored row, JSON columns decoded (String keys inside
      # them, as the documents were written).
      def decode(row)
        out = row.dup
        JSON_COLUMNS.each do |name|
          next unless out.key?(name)

          out[name] = load(out, name)
        end
        out
      end

      # Serialises one JSON column; objects such as LoadResult are stored
      # through their #to_h.
      def dump(key, name, value)
        return nil if value.nil?

        value = value.to_h unless value.is_a?(Hash) || value.is_a?(Array) || !value.respond_to?(:to_h)
        JSON.generate(value)
      rescue JSON::GeneratorError => e
        raise ArgumentError, "trial #{key}: #{name} cannot be stored as JSON (#{e.message.lines.first.strip})"
      end

      def load(row, name)
        text = row[name]
        text.nil? ? nil : JSON.parse(text)
      rescue JSON::ParserError
        raise Store::Error, "trial #{row[:key]} (id #{row[:id]}): column #{name} holds invalid JSON; the results database is damaged"
      end
    end
  end
end
