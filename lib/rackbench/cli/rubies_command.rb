# frozen_string_literal: true

require "json"
require "optparse"
require "terminal-table"

module Rackbench
  module CLI
    # `rackbench rubies`: the Ruby installations rackbench finds (PATH,
    # rbenv, chruby, asdf, mise, rvm, and paths given), deduplicated by real
    # path, each described by running it.
    class RubiesCommand
      def initialize(out:, err:)
        @out = out
        @err = err
      end

      def run(argv)
        options = { paths: [] }
        parse(argv, options)
        return CLI::EXIT_OK if options[:help]

        installs = Rubies.discover(extra_paths: options[:paths])
        if options[:json]
          @out.puts JSON.pretty_generate(installs.map { |i| i.to_h.transform_keys(&:to_s) })
        else
          @out.puts table(installs)
        end
        CLI::EXIT_OK
      end

      private

      def table(installs)
        rows = installs.map do |i|
          if i.usable?
            [i.name, i.engine, i.version, i.jit.join(", "), i.source, i.path]
          else
            [i.name, "-", "-", "-", i.source, "#{i.path} (does not run: #{i.error})"]
          end
        end
        Terminal::Table.new(headings: %w[name engine version JIT source path], rows: rows).to_s
      end

      def parse(argv, options)
        parser = OptionParser.new do |p|
          p.banner = "Usage: rackbench rubies [options] [RUBY_PATH...]"
          p.separator "Lists the rubies an experiment can name (doc/rubies.md)."
          p.on("--json", "print JSON") { options[:json] = true }
          p.on("-h", "--help", "show this help") do
            @out.print p.help
            options[:help] = true
          end
        end
        options[:paths].concat(parser.parse(argv))
      rescue OptionParser::ParseError => e
        raise UsageError, e.message
      end
    end
  end
end
