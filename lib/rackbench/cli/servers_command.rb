# frozen_string_literal: true

require "json"
require_relative "command"

module Rackbench
  module CLI
    # `rackbench servers`: the app-server adapters, the gems each installs,
    # what processes x threads each can run and the options each accepts
    # (doc/servers.md).
    class ServersCommand < Command
      def run(argv)
        json = false
        options = {}
        rest = parse_options(argv, "Usage: rackbench servers [--json] [--wide]") do |p|
          p.on("--json", "print JSON") { json = true }
          wide_option(p, options)
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}'" unless rest.empty?

        adapters = Servers.all
        if json
          @out.puts JSON.pretty_generate(adapters.map { |a| describe(a) })
        else
          rows = adapters.map { |a| [a.name, a.gem_lines("ruby").join("; "), a.supports, option_keys(a)] }
          @out.puts Text::Table.new(headings: %w[server gems supports options], rows: rows,
                                    width: output_width(options)).to_s
        end
        CLI::EXIT_OK
      end

      private

      def option_keys(adapter)
        adapter.option_schema.empty? ? "none" : adapter.option_schema.keys.join(", ")
      end

      def describe(adapter)
        {
          "name" => adapter.name, "supports" => adapter.supports,
          "gems" => { "ruby" => adapter.gem_lines("ruby"), "jruby" => adapter.gem_lines("jruby") },
          "jruby" => adapter.unsupported_reason(processes: 1, threads: 1, ruby_engine: "jruby").nil?,
          "server_gem" => adapter.server_gem,
          "options" => adapter.option_schema.map do |option|
            { "key" => option.key, "type" => option.type.text, "default" => option.default, "effect" => option.effect,
              "reaches" => option.reaches }
          end
        }
      end
    end
  end
end
