# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"
require_relative "compare_sides"
require_relative "gate_options"

module Rackbench
  module CLI
    # `rackbench gate`: whether a candidate regressed against its baseline
    # beyond the thresholds (Gate), as an exit code for CI: 0 (no),
    # EXIT_REGRESSED (yes), EXIT_CANNOT_SAY (the results cannot tell).
    #
    # * no argument: each configuration of the experiment in --results
    #   against its --baseline (default: the first configuration);
    # * --previous: the latest experiment in --results against the one
    #   stored before it under the same name (the previous labelled run);
    # * A B: B against A, as `compare` takes them (two experiments, or two
    #   configuration specs of one).
    class GateCommand < Command
      include ReportOptions
      include CompareSides
      include GateOptions

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, report: {} }
        rest = parse(argv, options)
        return CLI::EXIT_OK unless rest

        gate = build(rest, options)
        code = write_gate_markdown(gate, options)
        if options[:json]
          @out.puts JSON.pretty_generate(gate.to_h.merge("exit_code" => code))
        elsif options[:markdown] != "-"
          @out.print Gate::Terminal.new(gate.to_h.merge("exit_code" => code), width: output_width(options)).render
        end
        @err.puts gate_status_lines(gate).join("\n") if options[:json] || options[:markdown] == "-"
        code
      end

      private

      def build(rest, options)
        settings = gate_settings(options)
        case rest.size
        when 0
          return previous(options, settings) if options[:previous]

          report = with_store(options) do |store|
            Report.new(store, experiment_id: options[:id], name: options[:experiment], **options[:report])
          end
          Gate.within(report, **settings)
        when 2
          raise UsageError, "--previous takes no arguments: it compares the runs in --results" if options[:previous]

          between(options, *rest, settings)
        else
          raise UsageError, "gate takes no argument or two, BASELINE and CANDIDATE (see rackbench gate --help)"
        end
      end

      # The gate of two sides as compare reads them; two experiments
      # without a configuration in common cannot be judged (exit 4).
      def between(options, ref_a, ref_b, settings)
        return Gate.between(*compare_sides(options, ref_a, ref_b), **settings) if [ref_a, ref_b].all? { |r| r.include?("=") }

        of_experiments(experiment_reports(options, ref_a, ref_b), settings)
      end

      # The gate judges the machines itself (testbed-aware: "cannot say"
      # for two machines), so compare's own refusal is not asked for.
      def of_experiments(reports, settings)
        Gate.between(Report::Compare.experiments(*reports, different_machines: true), *reports, **settings)
      rescue Report::Compare::NothingInCommon
        Gate.nothing_in_common(*reports, **settings)
      end

      # The latest experiment (or --experiment's, or --id) against the one
      # stored before it under the same name.
      def previous(options, settings)
        reports = with_store(options) do |store|
          latest = options[:id] ? store.experiment(options[:id]) : store.latest_experiment(name: options[:experiment])
          raise UsageError, "no experiment to gate in #{store.location}: run one with rackbench run" unless latest

          earlier = store.experiments.select { |e| e[:name] == latest[:name] && e[:id] < latest[:id] }.last
          unless earlier
            raise UsageError, "#{store.location} holds no run of experiment '#{latest[:name]}' before id " \
                              "#{latest[:id]} to compare with"
          end
          [earlier, latest].map { |e| Report.new(store, experiment_id: e[:id], **options[:report]) }
        end
        of_experiments(reports, settings)
      end

      def parse(argv, options)
        rest = parse_options(argv, "Usage: rackbench gate [options] [BASELINE CANDIDATE]") do |p|
          p.separator "Exit 0: no configuration regressed beyond the thresholds; #{CLI::EXIT_REGRESSED}: one did; " \
                      "#{CLI::EXIT_CANNOT_SAY}: the results cannot say (too few batches, failed trials, different " \
                      "machines). Without arguments, each configuration of the experiment against its --baseline; " \
                      "BASELINE and CANDIDATE as compare takes them (experiments, results directories, or " \
                      "configuration specs). doc/ci.md."
          results_options(p, options)
          p.on("--previous", "the latest experiment in --results against the run of it stored before") do
            options[:previous] = true
          end
          gate_options(p, options)
          p.on("--json", "print the gate document (doc/output.md)") { options[:json] = true }
          wide_option(p, options)
          statistics_options(p, options[:report])
        end
        if rest && options[:json] && options[:markdown] == "-"
          raise UsageError, "--json and --markdown - both print to standard output: give --markdown a file"
        end
        rest
      end
    end
  end
end
