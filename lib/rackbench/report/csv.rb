# frozen_string_literal: true

require "csv"

module Rackbench
  class Report
    # One CSV row per configuration, for spreadsheets and R/pandas: every
    # dimension as its own column, then the statistics (units in the
    # column names). Trials are in the JSON document.
    class Csv
      STAT_COLUMNS = %w[
        batches failed rps_median rps_mean rps_stddev rps_mad rps_min rps_max rps_cv rps_ci95_low rps_ci95_high
        ratio ratio_ci95_low ratio_ci95_high verdict batches_needed
        latency_p50_us latency_p90_us latency_p99_us latency_p99_9_us latency_max_us latency_mean_us
        error_rate bytes_per_s rss_peak_bytes pss_peak_bytes rps_per_gb flags
      ].freeze

      def initialize(report)
        @report = report
      end

      def render
        dims = @report.configs.flat_map { |c| c.dims.keys }.uniq
        CSV.generate do |csv|
          csv << ["config_id", *dims, *STAT_COLUMNS]
          @report.configs.each do |config|
            h = config.to_h
            csv << [h["id"], *dims.map { |d| h["dims"][d] }, *stats(h)]
          end
        end
      end

      private

      def stats(h)
        lat = h["latency_us"] || {}
        [h["batches"], h["failed"], h["rps_median"], h["rps_mean"], h["rps_stddev"], h["rps_mad"], h["rps_min"],
         h["rps_max"], h["rps_cv"], h["rps_ci95"]&.first, h["rps_ci95"]&.last, h["ratio"], h["ratio_ci95"]&.first,
         h["ratio_ci95"]&.last, h["verdict"], h["batches_needed"], lat["p50"], lat["p90"], lat["p99"], lat["p99_9"],
         lat["max"], lat["mean"], h["error_rate"], h["bytes_per_s"], h["rss_peak_bytes"], h["pss_peak_bytes"],
         h["rps_per_gb"], h["flags"].map { |f| f["kind"] }.uniq.join(";")]
      end
    end
  end
end
