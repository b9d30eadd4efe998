# frozen_string_literal: true

require "optparse"

module Rackbench
  module CLI
    # What every subcommand shares: where it writes, and option parsing
    # with -h/--help and one-line errors.
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
    end
  end
end
