# frozen_string_literal: true

module Rackbench
  class Report
    # One column of the configurations table (Report::Columns lists them
    # all): its key in the JSON configuration entry, what it counts, how
    # its value is computed from a ConfigSummary, and the cells it shows
    # in each other view (the terminal table, CSV, the HTML page).
    #
    # The JSON entry is computed from ConfigSummary; every other view
    # formats the entry, never the ConfigSummary, so the HTML page of a
    # saved document shows what the terminal showed.
    #
    #   Column.new("rps_cv", unit: :fraction, value: ->(c) { c.summary.cv },
    #              csv: Column.cell("rps_cv"), terminal: Column.cell("CV", format: [:percent, { digits: 1 }]))
    class Column
      # The views beside JSON a column can show cells in.
      VIEWS = %i[terminal csv html].freeze

      # The Units formatter a terminal or HTML cell uses when it names none,
      # by the column's unit. CSV cells carry the value itself.
      DEFAULT_FORMATS = {
        count: :integer, rate: :rate, ratio: :ratio, fraction: :percent, us: :latency_us, bytes: :megabytes,
        bytes_per_s: :megabytes
      }.freeze

      # One cell of a view.
      # heading :: a String, or a Proc given the ColumnLayout (a heading
      #            that names the rate unit)
      # pick :: a Proc from the column's value to the cell's (one end of an
      #         interval, one percentile) (default: the value itself)
      # format :: how the cell's text is written: a Units formatter's name,
      #           [name, keyword options], or a Proc given (value, entry,
      #           layout) (default: by the column's unit for the terminal and
      #           HTML, none for CSV)
      # only :: the name of a Columns::CONDITIONS entry: the cell is shown
      #         only when it holds for the configurations shown (default:
      #         always)
      # align :: :right (numbers, default) or :left (text)
      # markup :: how a view draws the cell beyond its text (:verdict: the
      #           terminal colours it, the page draws a badge; :flags: the
      #           page draws a list)
      Cell = Struct.new(:heading, :pick, :format, :only, :align, :markup, keyword_init: true)

      # One cell per dimension the layout shows, headed by the dimension's
      # name, left-aligned. format :: as Cell's (default: the value itself).
      Dimensions = Struct.new(:format)

      # A cell as a view shows it: its heading, alignment and markup (as
      # Cell's), and +text+, a Proc from a configuration entry to the
      # cell's text (CSV: its value).
      Shown = Struct.new(:heading, :align, :markup, :text) do
        # The cell's text (CSV: value) for +entry+, a configuration entry.
        def write(entry)
          text.call(entry)
        end
      end

      # A Cell headed +heading+; options as Cell's members.
      def self.cell(heading, align: :right, **options)
        Cell.new(heading: heading, align: align, **options)
      end

      attr_reader :name, :unit

      # name :: the column's key in the JSON configuration entry
      # :unit :: what the value counts (a key of DEFAULT_FORMATS) (default: none)
      # :value :: how the value is computed from a ConfigSummary: a method
      #           name or a Proc given the ConfigSummary. Without one the
      #           column is in no JSON entry: its cells are written from other
      #           columns' values (the terminal's ± interval) (default: none)
      # :terminal, :csv, :html :: the column's cells in that view: a Cell,
      #                           an Array of Cells, or a Dimensions
      #                           (default: none, the view does not show it)
      def initialize(name, unit: nil, value: nil, **views)
        unknown = views.keys - VIEWS
        raise ArgumentError, "column #{name}: unknown views #{unknown.join(", ")}" unless unknown.empty?
        raise ArgumentError, "column #{name}: unknown unit #{unit.inspect}" if unit && !DEFAULT_FORMATS.key?(unit)

        @name = name
        @unit = unit
        @value = value
        # (Not Array(cells): a Cell is a Struct, which Array() would split.)
        @views = views.transform_values { |cells| cells.is_a?(Cell) ? [cells] : cells }
      end

      # Whether the JSON configuration entry holds this column.
      def json?
        !@value.nil?
      end

      # Whether +view+ (:json or one of VIEWS) shows this column.
      def shown_in?(view)
        view == :json ? json? : @views.key?(view)
      end

      # The column's value for +config+ (a ConfigSummary), as the JSON
      # entry holds it.
      def value_of(config)
        @value.is_a?(Proc) ? @value.call(config) : config.public_send(@value)
      end

      # The column's cells in +view+ as +layout+ (a ColumnLayout) shows
      # them: an Array of Shown, empty when the view does not show the
      # column or no cell's condition holds.
      def cells(view, layout)
        spec = @views[view]
        return [] if spec.nil?
        return dimension_cells(view, spec, layout) if spec.is_a?(Dimensions)

        spec.select { |cell| cell.only.nil? || layout.holds?(cell.only) }.map do |cell|
          heading = cell.heading.is_a?(Proc) ? cell.heading.call(layout) : cell.heading
          format = cell.format || (DEFAULT_FORMATS[@unit] unless view == :csv)
          text = lambda do |entry|
            value = entry[@name]
            value = cell.pick.call(value) if cell.pick
            write(format, value, entry, layout)
          end
          Shown.new(heading, cell.align, cell.markup, text)
        end
      end

      private

      def dimension_cells(view, spec, layout)
        names = view == :csv ? layout.all_dimensions : layout.dimensions
        names.map do |dim|
          Shown.new(dim, :left, nil, ->(entry) { write(spec.format, (entry[@name] || {})[dim], entry, layout) })
        end
      end

      def write(format, value, entry, layout)
        case format
        when nil then value
        when Symbol then Units.public_send(format, value)
        when Array then Units.public_send(format[0], value, **format[1])
        else format.call(value, entry, layout)
        end
      end
    end
  end
end
