# frozen_string_literal: true

module Rackbench
  class Report
    # The columns one view shows for a set of configurations: the cells of
    # every column of the table that the view shows and whose condition
    # holds for these configurations (latency columns only when something
    # measured latency...), with their headings and each configuration's
    # row. The terminal table, CSV and the HTML page each build one.
    #
    #   layout = ColumnLayout.new(report.configs.map(&:to_h), dimensions: report.dimensions)
    #   layout.headings(:terminal) # => ["ruby", "batches", "req/s", ...]
    #   layout.rows(:terminal)     # => [["ruby-3.1", "5", "1000", ...], ...]
    class ColumnLayout
      # The configuration entries shown (the JSON document's configs).
      attr_reader :entries
      # The dimensions the terminal and HTML show, one column each (those
      # that vary).
      attr_reader :dimensions
      # What throughput counts: "req/s", or "msg/s" for a micro-benchmark.
      attr_reader :rate_unit
      # The relative difference batches_needed is computed for (0.01), or nil.
      attr_reader :detect

      # entries :: configuration entries (ConfigSummary#to_h, or the JSON
      #            document's configs)
      # :dimensions :: the dimensions shown one column each in the terminal
      #                and HTML (CSV shows every dimension)
      # :rate_unit :: what throughput counts (default: "req/s")
      # :detect :: the relative difference batches_needed is for (default: nil)
      # :columns :: the table of columns (default: Columns::ALL)
      def initialize(entries, dimensions:, rate_unit: "req/s", detect: nil, columns: Columns::ALL)
        @entries = entries
        @dimensions = dimensions
        @rate_unit = rate_unit
        @detect = detect
        @columns = columns
        @holds = {}
        @cells = {}
      end

      # Every dimension of the configurations, in the order first seen: CSV
      # has a column for each.
      def all_dimensions
        @entries.flat_map { |e| (e["dims"] || {}).keys }.uniq
      end

      # Whether the Columns::CONDITIONS entry named +condition+ holds for
      # these configurations.
      def holds?(condition)
        return @holds[condition] if @holds.key?(condition)

        @holds[condition] = Columns::CONDITIONS.fetch(condition).call(@entries) ? true : false
      end

      # The cells +view+ (:terminal, :csv, :html) shows, in the table's
      # order: Column::Shown.
      def cells(view)
        @cells[view] ||= @columns.flat_map { |column| column.cells(view, self) }
      end

      # The headings of +view+'s cells.
      def headings(view)
        cells(view).map(&:heading)
      end

      # One row per configuration entry: +view+'s cells written for it.
      def rows(view)
        @entries.map { |entry| cells(view).map { |cell| cell.write(entry) } }
      end
    end
  end
end
