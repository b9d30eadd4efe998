# frozen_string_literal: true

module Rackbench
  class Report
    # One stored trial as the report sees it: its configuration's id, its
    # throughput, histogram and per-second timelines.
    class TrialEntry
      attr_reader :row

      # row :: a Hash from Store#trials (JSON columns decoded)
      def initialize(row)
        @row = row
      end

      def dims = @row[:dims] || {}
      def batch = @row[:batch]
      def rps = @row[:rps]
      # An ok trial with a throughput to count: a row stored "ok" without a
      # positive rps (damaged or hand-edited data) is left out like a failure.
      def ok?
        @row[:status] == "ok" && rps.is_a?(Numeric) && rps.positive? && rps.finite?
      end
      def engine = @row[:engine_result] || {}
      # What the server really ran (Runner::Identity), nil for trials stored
      # before rackbench checked it.
      def identity = @row[:identity]
      # What else the machine did in the window (Runner::MachineLoad), or nil.
      def machine = @row[:machine]

      # The warmup's requests and its failures (transport errors and
      # statuses other than 2xx/3xx), from the engine's warmup phase:
      # {"requests", "failed", "status", "errors"}, or nil without a warmup.
      def warmup
        w = engine["warmup"]
        return nil unless w.is_a?(Hash)

        status = w["status"] || {}
        errors = w["errors"] || {}
        bad = status.reject { |code, _| code.to_i.between?(200, 399) }
        { "requests" => w["requests"].to_i, "failed" => bad.values.sum + errors.values.sum,
          "status" => status, "errors" => errors.select { |_, n| n.to_i.positive? } }
      end

      # The configuration's text id: "ruby=ruby server=puma app=rack-hello
      # processes=1 threads=4" (dims in the experiment's order).
      def config_id
        @config_id ||= Report.config_id(dims)
      end

      # Requests attempted in the measured window: responses plus transport
      # errors (a 500 is a response, already among the requests).
      def attempts
        @row[:requests].to_i + (engine["errors"] || {}).values.sum
      end

      # The engine's latency histogram of the measured window, or nil.
      def histogram
        engine["histogram"]
      end

      # Requests completed per second of the measured window, gaps (seconds
      # without a response) filled with 0, for the warmup check.
      def requests_per_second
        timeline = engine["timeline"] || []
        return [] if timeline.empty?

        counts = Array.new(timeline.map { |s| s["second"] }.max + 1, 0)
        timeline.each { |s| counts[s["second"]] = s["requests"] }
        counts
      end

      def to_h
        r = @row
        {
          "key" => r[:key], "position" => r[:position], "batch" => r[:batch], "config_id" => config_id,
          "ruby" => r[:ruby], "server" => r[:server], "app" => r[:app], "processes" => r[:processes],
          "threads" => r[:threads], "dims" => dims, "status" => r[:status], "reason" => r[:reason],
          "rps" => r[:rps], "requests" => r[:requests], "errors" => r[:errors], "error_rate" => r[:error_rate],
          "bytes_per_s" => engine["bytes_per_s"], "latency_us" => r[:latency_us],
          "rss_peak_bytes" => r[:rss_peak_bytes], "pss_peak_bytes" => r[:pss_peak_bytes],
          "warmup_s" => r[:warmup_s], "measure_s" => r[:measure_s], "warmup" => warmup,
          "offered_rps" => engine["offered_rps"], "identity" => identity, "machine" => machine,
          "timeline" => timeline(engine["timeline"]),
          "warmup_timeline" => timeline(engine.dig("warmup", "timeline"))
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

    def self.format_dim(value)
      case value
      when nil then "null"
      when Float then value == value.round ? value.round.to_s : value.to_s
      else value.to_s
      end
    end
  end
end
