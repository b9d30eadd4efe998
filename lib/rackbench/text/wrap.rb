# frozen_string_literal: true

require "unicode/display_width"

module Rackbench
  module Text
    # One piece of text made to fit a width, measured as a terminal shows
    # it (display columns: "µ", "–" and "█" take one, a CJK character two,
    # colour escapes none). A text coloured as a whole ("\e[32mfaster\e[0m",
    # a verdict) keeps its colour on every line it is cut into.
    module Wrap
      ELLIPSIS = "…"
      ESCAPE = /\e\[[\d;]*m/.freeze
      # A text coloured as a whole: its opening escape, its text, the reset.
      COLOURED = /\A(\e\[[\d;]*m)(.*)(\e\[0m)\z/m.freeze
      # The first characters of a terminal-table line: a fitted table is
      # never wrapped again as prose.
      TABLE_LINE = /\A[+|]/.freeze

      module_function

      # Display columns of the widest line of +text+.
      def width(text)
        text.to_s.split("\n", -1).map { |line| Unicode::DisplayWidth.of(line.gsub(ESCAPE, "")) }.max || 0
      end

      # +text+ as lines of at most +width+ columns, broken between words; a
      # word longer than the width is cut (a path, a key), the rest of it on
      # the next line. Lines of +text+ stay lines.
      def lines(text, width)
        coloured(text) do |plain|
          plain.split("\n", -1).flat_map { |line| words_in_lines(line, width) }
        end
      end

      # +text+ on one line of at most +width+ columns: its middle replaced
      # by an ellipsis when it is longer ("/root/.cache/rack…/bin/ruby"), so
      # that both ends, which tell paths and keys apart, stay.
      def middle(text, width)
        coloured(text) do |plain|
          plain.split("\n", -1).map do |line|
            next line if width(line) <= width
            next take(line, width) if width <= 1

            head = (width - 1 + 1) / 2
            tail = width - 1 - head
            "#{take(line, head)}#{ELLIPSIS}#{take(line.reverse, tail).reverse}"
          end
        end
      end

      # Every line of +text+ longer than +width+ wrapped between words, the
      # following lines indented two columns more than its own indentation
      # (a hanging indent, so a long flag or path still reads as one item).
      # Table lines (Text::Table's, already fitted) are left as they are.
      # width nil: no limit.
      def prose(text, width)
        return text if width.nil?

        ends_with_newline = text.end_with?("\n")
        out = text.split("\n", -1)
        out.pop if ends_with_newline
        wrapped = out.flat_map { |line| prose_line(line, width) }
        "#{wrapped.join("\n")}#{"\n" if ends_with_newline}"
      end

      def prose_line(line, width)
        return [line] if line.match?(TABLE_LINE) || width(line) <= width

        indent = line[/\A */]
        hanging = " " * [indent.size + 2, width / 2].min
        first, *rest = lines(line.delete_prefix(indent), width - indent.size)
        next_lines = rest.empty? ? [] : lines(rest.join(" "), width - hanging.size)
        ["#{indent}#{first}", *next_lines.map { |l| "#{hanging}#{l}" }]
      end
      private_class_method :prose_line

      def coloured(text)
        text = text.to_s
        match = text.match(COLOURED)
        return yield(text.gsub(ESCAPE, "")) unless match && !match[2].match?(ESCAPE)

        yield(match[2]).map { |line| line.empty? ? line : "#{match[1]}#{line}#{match[3]}" }
      end
      private_class_method :coloured

      def words_in_lines(line, width)
        return [line] if width(line) <= width

        out = []
        current = +""
        line.split(/ +/).each do |word|
          candidate = current.empty? ? word : "#{current} #{word}"
          if width(candidate) <= width
            current = candidate
            next
          end
          out << current unless current.empty?
          current = word
          while width(current) > width
            piece = take(current, width)
            out << piece
            current = current[piece.size..]
          end
        end
        out << current unless current.empty?
        out.empty? ? [""] : out
      end
      private_class_method :words_in_lines

      # The longest start of +text+ within +width+ columns (at least one
      # character, so that cutting always moves on).
      def take(text, width)
        taken = +""
        text.each_char do |char|
          break if !taken.empty? && Unicode::DisplayWidth.of(taken + char) > width

          taken << char
        end
        taken
      end
      private_class_method :take
    end
  end
end
