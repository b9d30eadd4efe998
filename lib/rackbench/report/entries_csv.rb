# frozen_string_literal: true

require "csv"

module Rackbench
  class Report
    # One CSV row per entry of a request list per configuration
    # (`rackbench report --csv-pages`): the configuration's id and every
    # dimension, then the entry's figures of configs.entries, values
    # unformatted. A file of its own rather than a section of --csv: a
    # second header in the middle of one file is not CSV to a spreadsheet
    # or to pandas, and --csv's columns stay what scripts rely on.
    class EntriesCsv
      LATENCY_KEYS = %w[p50 p90 p99 p99_9 max mean].freeze
      HEADINGS = ["entry_index", "entry_name", "entry_label", "first", "weight", "batches", "requests", "share",
                  "rps_median", "rps_ci95_low", "rps_ci95_high", *LATENCY_KEYS.map { |k| "latency_#{k}_us" },
                  "failed", "error_rate", "hops", "status", "errors", "warmup_requests", "warmup_failed"].freeze

      # report :: the Report
      def initialize(report)
        @report = report
      end

      # The CSV text: a header line, then one line per entry of each
      # configuration with a request list (none without one).
      def render
        configs = @report.configs.map(&:to_h)
        dims = configs.flat_map { |c| (c["dims"] || {}).keys }.uniq
        CSV.generate do |csv|
          csv << ["config_id", *dims, *HEADINGS]
          configs.each do |config|
            values = dims.map { |d| config["dims"][d] }
            Array(config["entries"]).each { |entry| csv << [config["id"], *values, *row(entry)] }
          end
        end
      end

      private

      def row(entry)
        ci = entry["rps_ci95"] || [nil, nil]
        latency = entry["latency_us"] || {}
        warmup = entry["warmup"] || {}
        [entry["index"], entry["name"], entry["label"], entry["first"], entry["weight"], entry["batches"],
         entry["requests"], entry["share"], entry["rps_median"], ci[0], ci[1], *latency.values_at(*LATENCY_KEYS),
         entry["failed"], entry["error_rate"], entry["hops"], counts(entry["status"]), counts(entry["errors"]),
         warmup["requests"], warmup["failed"]]
      end

      # "200:120;303:3": non-zero counts, ";"-joined.
      def counts(hash)
        (hash || {}).select { |_, n| n.to_i.positive? }.map { |k, n| "#{k}:#{n}" }.join(";")
      end
    end
  end
end
