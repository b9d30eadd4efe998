# frozen_string_literal: true

require "json"
require_relative "command"

module Rackbench
  module CLI
    # `rackbench report`: the stored trials of an experiment as a table or
    # JSON (doc/output.md).
    class ReportCommand < Command
      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        rest = parse_options(argv, "Usage: rackbench report [options]") do |p|
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          p.on("--experiment NAME", "report the latest experiment of that name (default: the latest)") do |v|
            options[:experiment] = v
          end
          p.on("--json", "print JSON (doc/output.md)") { options[:json] = true }
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}' (see rackbench report --help)" unless rest.empty?
        unless File.exist?(File.join(options[:results], "results.db"))
          raise UsageError, "no results in #{options[:results]} (run an experiment first, or pass --results DIR)"
        end

        Store.open(options[:results]) do |store|
          report = TrialReport.new(store, name: options[:experiment])
          options[:json] ? @out.puts(JSON.pretty_generate(report.to_h)) : @out.print(report.table)
        end
        CLI::EXIT_OK
      end
    end
  end
end
