# frozen_string_literal: true

require "json"
require "optparse"
require "terminal-table"

module Rackbench
  module CLI
    # `rackbench servers`: the app-server adapters, the gems each installs
    # and what processes x threads each can run (doc/servers.md).
    class ServersCommand
      def initialize(out:, err:)
        @out = out
        @err = err
      end

      def run(argv)
        options = {}
        parse(argv, options)
        return CLI::EXIT_OK if options[:help]

        adapters = Servers.all
        if options[:json]
          @out.puts JSON.pretty_generate(adapters.map { |a| describe(a) })
        else
          rows = adapters.map { |a| [a.name, a.gem_lines("ruby").join("; "), a.supports] }
          @out.puts Terminal::Table.new(headings: %w[server gems supports], rows: rows).to_s
        end
        CLI::EXIT_OK
      end

      private

      def describe(adapter)
        {
          "name" => adapter.name, "supports" => adapter.supports,
          "gems" => { "ruby" => adapter.gem_lines("ruby"), "jruby" => adapter.gem_lines("jruby") },
          "jruby" => adapter.unsupported_reason(processes: 1, threads: 1, ruby_engine: "jruby").nil?
        }
      end

      def parse(argv, options)
        parser = OptionParser.new do |p|
          p.banner = "Usage: rackbench servers [--json]"
          p.on("--json", "print JSON") { options[:json] = true }
          p.on("-h", "--help", "show this help") do
            @out.print p.help
            options[:help] = true
          end
        end
        rest = parser.parse(argv)
        raise UsageError, "unexpected argument '#{rest.first}'" unless rest.empty?
      rescue OptionParser::ParseError => e
        raise UsageError, e.message
      end
    end
  end
end
