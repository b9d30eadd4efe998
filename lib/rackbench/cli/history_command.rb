# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench history`: each configuration's figure across the labelled
    # runs of one experiment in one or more results directories (Series),
    # change points marked and named by revision, runs of other machines
    # listed apart; in the terminal, as JSON, or as one HTML page.
    class HistoryCommand < Command
      include ReportOptions

      def run(argv)
        options = { results: [], where: [], report: {} }
        rest = parse(argv, options)
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}' (see rackbench history --help)" unless rest.empty?

        dirs = options[:results].empty? ? [CLI::DEFAULT_RESULTS_DIR] : options[:results]
        report_options = Report::Options.new(**options[:report])
        figure = Report::BatchFigures.fetch(options[:figure] || "rps")
        runs = Series.collect(dirs, name: options[:experiment], where: Labels.parse(options[:where]),
                                    options: options[:report])
        series = Series.new(runs, figure: figure,
                                  options: report_options, order: options[:order] || "date", only: options[:config],
                                  machine: options[:machine])
        doc = series.to_h
        options[:json] ? @out.puts(JSON.pretty_generate(doc)) : @out.print(Series::Terminal.new(doc, width: output_width(options)).render)
        (options[:json] ? @err : @out).puts "HTML history: #{Series::HtmlPage.new(doc).write(options[:html])}" if options[:html]
        CLI::EXIT_OK
      end

      private

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench history [options]") do |p|
          p.separator "Each configuration's figure across the labelled runs of an experiment (doc/ci.md)."
          p.on("--results DIR", "a results directory to read runs from (repeatable; default " \
                                "#{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] << v }
          p.on("--experiment NAME", "the experiment whose runs to draw (default: the latest's name)") do |v|
            options[:experiment] = v
          end
          p.on("--figure NAME", "what to draw: #{Report::BatchFigures.names.join(", ")} (default rps)") do |v|
            options[:figure] = v
          end
          p.on("--config SPEC", "only configurations with these dimension=value pairs, e.g. 'server=puma'") do |v|
            options[:config] = v
          end
          p.on("--machine NAME", "the series of this host or testbed (default: the latest run's)") do |v|
            options[:machine] = v
          end
          p.on("--where KEY=VALUE", "only runs labelled so, e.g. branch=main (repeatable)") { |v| options[:where] << v }
          p.on("--order ORDER", Series::ORDERS, "runs in order of date (default) or revision (commit dates)") do |v|
            options[:order] = v
          end
          p.on("--html FILE", "also write the history as one HTML page") { |v| options[:html] = v }
          p.on("--json", "print the history document (doc/output.md)") { options[:json] = true }
          wide_option(p, options)
          p.on("--equivalence PCT", "a change smaller than ±PCT is no change point (default 1%)") do |v|
            options[:report][:equivalence] = fraction(v, "--equivalence")
          end
          p.on("--confidence PCT", "confidence level of the intervals (default 95%)") do |v|
            options[:report][:confidence] = fraction(v, "--confidence")
          end
          p.on("--min-batches N", Integer, "ok batches a run needs for an interval (default 5)") do |v|
            options[:report][:min_batches] = v
          end
        end
      end
    end
  end
end
