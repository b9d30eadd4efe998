# frozen_string_literal: true

require "terminal-table"
require_relative "wrap"

module Rackbench
  module Text
    # A terminal-table that fits a width. Figures (right-aligned columns)
    # are never cut; headings wrap between their words; text columns wrap
    # within their cells (:wrap) or are shortened in the middle (:middle:
    # paths, keys, recipes, whose two ends tell them apart). When even
    # that is too wide (a report of fifteen figures), the columns continue
    # in a second table below, the key columns (the configuration) repeated
    # in each, as a wide data frame prints. Without a width (`--wide`),
    # the table is terminal-table's own, every cell whole.
    #
    #   Text::Table.new(headings: ["kind", "what", "size"], rows: rows, right: [2], shrink: { 1 => :middle },
    #                   width: Text::Width.for($stdout)).to_s
    class Table
      # The narrowest a text column is made: narrower, a wrapped name
      # becomes a column of syllables.
      WRAP_MIN_WIDTH = 10
      # A path shortened to less than this keeps too little of either end.
      MIDDLE_MIN_WIDTH = 20
      MODES = %i[wrap middle fixed].freeze

      # :headings :: the column headings
      # :rows :: rows of cells (Strings, or anything with to_s; nil is empty), or :separator for a rule
      # :title :: the title above the table (default: none)
      # :width :: the most columns a line may take (default: nil: no limit)
      # :right :: indices of the right-aligned columns: figures, never cut (default: [])
      # :shrink :: index => :wrap, :middle or :fixed, for the columns that differ from the default:
      #            right-aligned columns :fixed, the others :wrap (default: {})
      # :keys :: how many leading columns each continued table repeats (default: 1)
      def initialize(headings:, rows:, title: nil, width: nil, right: [], shrink: {}, keys: 1)
        @headings = headings.map(&:to_s)
        @rows = rows.map { |row| row == :separator ? row : row.map(&:to_s) }
        @title = title
        @width = width
        @right = right
        @modes = Array.new(@headings.size) { |i| shrink.fetch(i) { right.include?(i) ? :fixed : :wrap } }
        bad = @modes - MODES
        raise ArgumentError, "unknown shrink mode #{bad.first.inspect}" unless bad.empty?

        @keys = keys.clamp(0, @headings.size)
      end

      def to_s
        return render((0...@headings.size).to_a, nil, @title) unless @width

        parts = column_parts
        parts.each_with_index.map do |columns, i|
          title = i.zero? ? @title : "#{@title || "table"} (continued)"
          render(columns, allot(columns), title)
        end.join("\n")
      end

      private

      # Natural width of each column: its widest cell or heading.
      def natural
        @natural ||= @headings.each_index.map do |i|
          [Wrap.width(@headings[i]), *data_rows.map { |row| Wrap.width(row[i]) }].max
        end
      end

      # The least each column can be given: a heading keeps its longest
      # word; a figure keeps its widest value; a text column keeps its
      # words whole up to twice WRAP_MIN_WIDTH ("environment", not
      # "environmen" and "t"), longer ones (paths) are cut.
      def minimum
        @minimum ||= @headings.each_index.map do |i|
          least = case @modes[i]
                  when :fixed then data_rows.map { |row| Wrap.width(row[i]) }.max || 0
                  when :middle then [natural[i], MIDDLE_MIN_WIDTH].min
                  else [natural[i], longest_word(data_rows.map { |row| row[i] }).clamp(WRAP_MIN_WIDTH, 2 * WRAP_MIN_WIDTH)].min
                  end
          [least, longest_word([@headings[i]])].max
        end
      end

      def longest_word(texts)
        texts.flat_map { |text| text.split(/\s+/) }.map { |word| Wrap.width(word) }.max || 0
      end

      def data_rows
        @data_rows ||= @rows.reject { |row| row == :separator }
      end

      # A table of n columns takes their widths plus "| " before each,
      # " " after each and the closing "|".
      def overhead(count) = (3 * count) + 1

      # The columns of each table: all in one when their least widths fit,
      # else the keys followed by as many of the others as fit, in order.
      def column_parts
        all = (0...@headings.size).to_a
        return [all] if fits?(all)

        keys = all.first(@keys)
        parts = []
        current = keys.dup
        (all - keys).each do |i|
          if current.size > keys.size && !fits?(current + [i])
            parts << current
            current = keys.dup
          end
          current << i
        end
        parts << current
      end

      def fits?(columns)
        columns.sum { |i| minimum[i] } + overhead(columns.size) <= @width
      end

      # Each column's width: its least, then the room left goes first to
      # the figures' wrapped headings (the fewest columns first: a column
      # or two unwraps a heading), then one column at a time to the
      # wrapped text column that lacks most of its natural width (each
      # column there saves lines), and last to the shortened ones.
      def allot(columns)
        widths = columns.to_h { |i| [i, minimum[i]] }
        room = @width - overhead(columns.size) - widths.values.sum
        columns.select { |i| @modes[i] == :fixed }.sort_by { |i| [natural[i] - widths[i], i] }.each do |i|
          grow = natural[i] - widths[i]
          next if grow > room

          widths[i] += grow
          room -= grow
        end
        while room.positive?
          i = columns.max_by { |c| [natural[c] > widths[c] && @modes[c] == :wrap ? 1 : 0, natural[c] - widths[c], -c] }
          break if natural[i] <= widths[i]

          widths[i] += 1
          room -= 1
        end
        widths
      end

      def render(columns, widths, title)
        table = ::Terminal::Table.new
        table.title = fit_title(title, columns, widths) if title
        table.headings = columns.map { |i| widths ? Wrap.lines(@headings[i], widths[i]).join("\n") : @headings[i] }
        @rows.each do |row|
          table.add_row(row == :separator ? :separator : columns.map { |i| cell(row[i], i, widths) })
        end
        columns.each_with_index { |i, position| table.align_column(position, :right) if @right.include?(i) }
        table.to_s
      end

      def cell(text, index, widths)
        return text unless widths

        width = widths[index]
        case @modes[index]
        when :middle then Wrap.middle(text, width).join("\n")
        when :wrap then Wrap.lines(text, width).join("\n")
        else text
        end
      end

      # The title spans the table: wrapped within it, so it never widens it.
      def fit_title(title, columns, widths)
        return title unless widths

        inner = columns.sum { |i| widths[i] } + overhead(columns.size) - 4
        Wrap.lines(title, [inner, 1].max).join("\n")
      end
    end
  end
end
