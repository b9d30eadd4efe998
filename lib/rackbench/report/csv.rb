# frozen_string_literal: true

require "csv"

module Rackbench
  class Report
    # One CSV row per configuration, for spreadsheets and R/pandas:
    # Report::Columns' CSV cells (the configuration's id, every dimension as
    # its own column, then the statistics, units in the column names),
    # values unformatted. Trials are in the JSON document.
    class Csv
      # report :: the Report
      # :columns :: the table of columns (default: Report::Columns::ALL)
      def initialize(report, columns: Columns::ALL)
        @report = report
        @columns = columns
      end

      # The CSV text, a header line and one line per configuration.
      def render
        layout = ColumnLayout.new(@report.configs.map { |c| c.to_h(@columns) }, dimensions: @report.dimensions,
                                  columns: @columns)
        CSV.generate do |csv|
          csv << layout.headings(:csv)
          layout.rows(:csv).each { |row| csv << row }
        end
      end
    end
  end
end
