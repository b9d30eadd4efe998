# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench report`: the statistics of a stored experiment (one row per
    # configuration, verdicts against a baseline) as a terminal table, JSON,
    # CSV or a single-file HTML page (doc/output.md, doc/report.md).
    class ReportCommand < Command
      include ReportOptions

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, report: {} }
        rest = parse_options(argv, "Usage: rackbench report [options]") do |p|
          p.separator "Statistics of the latest stored experiment (or --experiment NAME) in the results directory."
          results_options(p, options)
          p.on("--json", "print the report document as JSON (doc/output.md)") { options[:json] = true }
          p.on("--csv", "print one CSV row per configuration") { options[:csv] = true }
          p.on("--csv-pages", "print one CSV row per entry of a request list per configuration") do
            options[:csv_pages] = true
          end
          p.on("--csv-diffs", "print one CSV row per function and profile frame of each configuration " \
                              "against its baseline (where the time went)") { options[:csv_diffs] = true }
          p.on("--html FILE", "write the single-file HTML report to FILE") { |v| options[:html] = v }
          p.on("--speedscope FILE", "also write the profiled trials' profiles as a speedscope file") do |v|
            options[:speedscope] = v
          end
          p.on("--trials", "print the per-trial table instead of the configurations") { options[:trials] = true }
          p.on("--history", "print the earlier attempts of retried trials (--retry-failed)") { options[:history] = true }
          wide_option(p, options)
          p.on("--sort ORDER", %w[order rps], "rows in experiment order (default) or by median req/s (rps)") do |v|
            options[:sort] = v.to_sym
          end
          statistics_options(p, options[:report])
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}' (see rackbench report --help)" unless rest.empty?
        outputs = %i[json csv csv_pages csv_diffs trials history]
        if outputs.count { |name| options[name] } > 1
          raise UsageError, "choose one of --json, --csv, --csv-pages, --csv-diffs, --trials and --history"
        end

        with_store(options) { |store| print_report(store, options) }
        CLI::EXIT_OK
      end

      private

      def print_report(store, options)
        if options[:trials]
          trial_report = TrialReport.new(store, experiment_id: options[:id], name: options[:experiment])
          return @out.print(trial_report.table(width: output_width(options)))
        end

        report = Report.new(store, experiment_id: options[:id], name: options[:experiment], **options[:report])
        return @out.print(report.history.to_text) if options[:history]

        if options[:speedscope]
          require_relative "speedscope_export"
          path = SpeedscopeExport.write(report, options[:speedscope])
          @err.puts "Speedscope profile: #{path}"
        end

        if options[:html]
          path = report.write_html(options[:html])
          machine = options[:json] || options[:csv] || options[:csv_pages] || options[:csv_diffs]
          @err.puts "rackbench: wrote #{path}" if machine
          @out.puts "HTML report: #{path}" unless machine
        end
        if options[:json]
          @out.puts JSON.pretty_generate(report.to_h)
        elsif options[:csv]
          @out.print report.to_csv
        elsif options[:csv_pages]
          @out.print report.to_csv_pages
        elsif options[:csv_diffs]
          @out.print report.to_csv_diffs
        else
          @out.print Report::Terminal.new(report, color: color?, sort: options[:sort] || :order,
                                          width: output_width(options)).render
        end
      end
    end
  end
end
