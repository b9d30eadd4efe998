# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench compare A B`: B against A (Report::Compare), for two
    # configurations of one experiment when A and B are dimension=value
    # specs ('server=puma' 'server=falcon'), else for two experiments, A
    # and B each an experiment name, an experiment id, or a results
    # directory (its latest experiment).
    class CompareCommand < Command
      include ReportOptions

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, report: {} }
        rest = parse_options(argv, "Usage: rackbench compare [options] A B") do |p|
          p.separator "A and B: configuration specs such as 'ruby=3.1 threads=4', or experiments " \
                      "(a name, an id, or a results directory)."
          results_options(p, options)
          p.on("--json", "print the comparison as JSON") { options[:json] = true }
          p.on("--different-machines", "compare experiments that ran on different machines (refused otherwise); " \
                                       "the output says how they differ") { options[:different_machines] = true }
          statistics_options(p, options[:report])
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "compare takes two arguments, A and B (see rackbench compare --help)" unless rest.size == 2

        compare = rest.all? { |a| a.include?("=") } ? compare_configs(options, *rest) : compare_experiments(options, *rest)
        options[:json] ? @out.puts(JSON.pretty_generate(compare.to_a)) : @out.print(compare.terminal_table)
        CLI::EXIT_OK
      end

      private

      def compare_configs(options, spec_a, spec_b)
        with_store(options) do |store|
          report = Report.new(store, experiment_id: options[:id], name: options[:experiment], **options[:report])
          Report::Compare.configurations(report, spec_a, spec_b)
        end
      end

      def compare_experiments(options, ref_a, ref_b)
        Report::Compare.experiments(experiment_report(ref_a, options), experiment_report(ref_b, options),
                                    different_machines: options[:different_machines])
      end

      # The report of an experiment name, an id (digits), or a results
      # directory (its latest experiment).
      def experiment_report(ref, options)
        dir, which = if File.directory?(ref) then [ref, {}]
                     elsif ref.match?(/\A\d+\z/) then [options[:results], { experiment_id: Integer(ref) }]
                     else [options[:results], { name: ref }]
                     end
        with_store(results: dir) { |store| Report.new(store, **which, **options[:report]) }
      end
    end
  end
end
