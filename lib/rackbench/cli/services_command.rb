# frozen_string_literal: true

require "json"
require_relative "command"

module Rackbench
  module CLI
    # `rackbench services`: what rackbench starts beside an app's server,
    # each from its registry: the services an app may name (`services:`,
    # doc/services.md), and the proxies an experiment may put in front of
    # the server (`proxy:`, doc/topologies.md), with the program each runs
    # and whether it is installed here.
    class ServicesCommand < Command
      def run(argv)
        json = false
        options = {}
        rest = parse_options(argv, "Usage: rackbench services [--json] [--wide]") do |p|
          p.on("--json", "print JSON") { json = true }
          wide_option(p, options)
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}'" unless rest.empty?

        services = Services.all.map { |kind| describe_service(kind) }
        proxies = Proxy.all.map { |topology| describe_proxy(topology) }
        if json
          @out.puts JSON.pretty_generate("services" => services, "proxies" => proxies)
        else
          @out.puts table("service", services, output_width(options))
          @out.puts table("proxy", proxies, output_width(options))
        end
        CLI::EXIT_OK
      end

      private

      def describe_service(kind)
        { "name" => kind.name, "title" => kind.title, "programs" => kind.programs.values, "env" => kind.default_env,
          "package" => kind.package, "version" => kind.missing_reason ? nil : kind.version,
          "missing" => kind.missing_reason }
      end

      def describe_proxy(topology)
        reason = topology.unsupported_reason
        { "name" => topology.name, "program" => topology.program, "cache" => topology.cache?,
          "version" => reason ? nil : topology.version, "missing" => reason }
      end

      def table(what, rows, width)
        cells = rows.map do |row|
          program = Array(row["programs"] || row["program"]).join(", ")
          what_it_gives = row.key?("env") ? row["env"] : (row["cache"] ? "caches" : "no cache")
          [row["name"], program, what_it_gives, row["version"] || "not installed"]
        end
        Text::Table.new(headings: [what, "program", what == "service" ? "the app gets" : "cache", "installed"],
                        rows: cells, width: width).to_s
      end
    end
  end
end
