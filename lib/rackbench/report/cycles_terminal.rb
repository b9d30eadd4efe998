# frozen_string_literal: true

module Rackbench
  class Report
    # The "Estimated cycles per request" section of the terminal report,
    # for configurations whose instructions trials ran callgrind's cache
    # simulation (configs.cycles): the median over the batches, its
    # interval, the last-level hits and memory accesses per request that
    # make it differ from the instructions, and against the baseline the
    # ratio with its interval and verdict, beside the instructions' verdict
    # and, when time was measured, time's: where a change moved memory
    # traffic rather than instructions reads off one row.
    class CyclesTerminal
      HEADINGS = ["cycles/request", "95% CI", "LL hits/req", "RAM/req", "ratio", "ratio 95% CI", "verdict",
                  "instr verdict"].freeze

      # entries :: the report's configuration entries (Hashes)
      # :dimensions :: the dimensions the labels show
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(entries, dimensions:, width: nil)
        @entries = entries.select { |e| e["cycles"] }
        @dimensions = dimensions
        @width = width
      end

      def render
        return nil if @entries.empty?

        time = @entries.any? { |e| e["batches"].to_i.positive? }
        headings = @dimensions + HEADINGS + (time ? ["time verdict"] : [])
        rows = @entries.map { |e| row(e, time) }
        right = (@dimensions.size...headings.size).reject { |i| headings[i].include?("verdict") }
        Text::Table.new(title: "Estimated cycles per request (callgrind's cache simulation: " \
                               "#{@entries.first["cycles"]["model"]})", headings: headings, rows: rows, right: right,
                        keys: @dimensions.size, width: @width).to_s
      end

      private

      def row(entry, time)
        doc = entry["cycles"]
        per = doc["per_request"]
        against = doc["against_baseline"]
        misses = doc["misses_per_request"]
        cells = @dimensions.map { |d| Report.format_dim(entry["dims"][d]) }
        cells += [Units.count_grouped(per["median"]), Units.interval(per["ci95"], :count_grouped, separator: "–"),
                  Units.count_grouped(misses["ll_hits"]), Units.count_grouped(misses["ram_hits"]),
                  Units.ratio(against&.fetch("ratio")), Units.interval(against&.fetch("ratio_ci95"), :ratio, separator: "–"),
                  against ? against["verdict"] : "baseline",
                  entry.dig("instructions", "against_baseline", "verdict") || Units::NONE]
        cells << (entry["batches"].to_i.positive? ? entry["verdict"] : Units::NONE) if time
        cells
      end
    end
  end
end
