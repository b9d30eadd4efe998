# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"
require_relative "compare_sides"
require_relative "gate_options"

module Rackbench
  module CLI
    # `rackbench compare A B`: B against A (Report::Compare), for two
    # configurations of one experiment when A and B are dimension=value
    # specs ('server=puma' 'server=falcon'), else for two experiments, A
    # and B each an experiment name, an experiment id, or a results
    # directory (its latest experiment). With --fail-on it is also the
    # gate (Gate.between): its exit code says whether B regressed;
    # --markdown writes the gate's summary.
    class CompareCommand < Command
      include ReportOptions
      include CompareSides
      include GateOptions

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, report: {} }
        rest = parse_options(argv, "Usage: rackbench compare [options] A B") do |p|
          p.separator "A and B: configuration specs such as 'ruby=3.1 threads=4', or experiments " \
                      "(a name, an id, or a results directory)."
          results_options(p, options)
          p.on("--json", "print the comparison as JSON") { options[:json] = true }
          wide_option(p, options)
          p.on("--different-machines", "compare experiments that ran on different machines (refused otherwise); " \
                                       "the output says how they differ") { options[:different_machines] = true }
          gate_options(p, options)
          statistics_options(p, options[:report])
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "compare takes two arguments, A and B (see rackbench compare --help)" unless rest.size == 2

        compare, report_a, report_b = compare_sides(options, *rest)
        gate = gate?(options) ? Gate.between(compare, report_a, report_b, **gate_settings(options)) : nil
        if options[:json] then @out.puts(JSON.pretty_generate(compare.to_a))
        elsif options[:markdown] != "-" then @out.print(compare.terminal_table(width: output_width(options)))
        end
        return CLI::EXIT_OK unless gate

        code = write_gate_markdown(gate, options)
        @err.puts gate_status_lines(gate).join("\n")
        options[:fail_on] ? code : CLI::EXIT_OK
      end
    end
  end
end
