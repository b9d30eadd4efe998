# frozen_string_literal: true

require "optparse"

module Rackbench
  module CLI
    # What every subcommand shares: where it writes, option parsing with
    # -h/--help and one-line errors, and how wide its tables may be.
    class Command
      def initialize(out:, err:)
        @out = out
        @err = err
      end

      private

      # Parses argv with an OptionParser under banner, the block adding the
      # command's options. Returns the arguments left, or nil once --help
      # has printed the help. Raises UsageError for a bad option.
      def parse_options(argv, banner)
        help = false
        parser = OptionParser.new do |p|
          p.banner = banner
          yield p
          p.on("-h", "--help", "show this help") { help = true }
        end
        rest = parser.parse(argv)
        return rest unless help

        @out.print parser.help
        nil
      rescue OptionParser::ParseError => e
        raise UsageError, e.message
      end

      # --wide, for a command that prints tables: into options[:wide].
      def wide_option(parser, options)
        parser.on("--wide", "print tables and lines whole, however wide (default: fitted to the terminal's width, " \
                            "#{Text::Width::NOT_A_TERMINAL} columns when not a terminal)") { options[:wide] = true }
      end

      # The most columns a line of the output takes (Text::Width): the
      # terminal's, 100 in a pipe, no limit with --wide.
      def output_width(options)
        Text::Width.for(@out, wide: options[:wide])
      end
    end
  end
end
