# frozen_string_literal: true

require "csv"

module Rackbench
  class Report
    # The diffs as CSV (`rackbench report --csv-diffs`): one row per
    # function and per profile frame of every diff (Report::Diffs#to_h,
    # the rows the document keeps), values unformatted, empty where a
    # figure does not apply (inclusive costs for a frame, a profile's
    # totals for a function).
    class DiffsCsv
      COLUMNS = %w[config_id baseline_id kind name where a b difference difference_ci_low difference_ci_high share
                   only changed a_inclusive b_inclusive inclusive_difference a_calls b_calls per_call_difference
                   a_cycles b_cycles cycles_difference a_total b_total total_difference unit].freeze

      # diffs :: the document's "diffs" entries
      def initialize(diffs)
        @diffs = Array(diffs)
      end

      def render
        CSV.generate do |csv|
          csv << COLUMNS
          @diffs.each do |diff|
            ids = { "config_id" => diff["config_id"], "baseline_id" => diff["baseline_id"] }
            Array(diff.dig("functions", "rows")).each do |row|
              csv << line(ids.merge(row, "kind" => "function", "where" => row["object"], "unit" => "instructions"))
            end
            profile = diff["profile"]
            Array(profile && profile["rows"]).each do |row|
              csv << line(ids.merge(row, "kind" => "frame", "where" => row["file"], "unit" => profile["unit"]))
            end
          end
        end
      end

      private

      def line(row)
        low, high = row["difference_ci"]
        COLUMNS.map do |name|
          case name
          when "difference_ci_low" then low
          when "difference_ci_high" then high
          else row[name]
          end
        end
      end
    end
  end
end
