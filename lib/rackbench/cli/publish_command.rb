# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench publish --out SITE`: the static site of a store's runs,
    # their timelines and regressions (Publish, doc/publish.md), written
    # incrementally; each new regression given once to --on-regression.
    class PublishCommand < Command
      include ReportOptions

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, where: [], settings: {} }
        rest = parse(argv, options)
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}' (see rackbench publish --help)" unless rest.empty?
        raise UsageError, "publish needs --out DIR, the site's directory" unless options[:out]

        settings = Publish::Settings.new(**options[:settings], where: Labels.parse(options[:where]))
        hook = options[:hook] && Publish::Hook.new(options[:hook], timeout_s: options[:hook_timeout_s] || Publish::Hook::DEFAULT_TIMEOUT_S,
                                                                   site_url: settings.url)
        progress = options[:json] ? nil : ->(line) { @err.puts(line) }
        outcome, regressions = with_store(options) do |store|
          [Publish.run(store, out: options[:out], settings: settings, hook: hook, progress: progress),
           Regressions.new(store).all]
        end
        report(outcome, regressions, options)
        outcome.announce_failures.each { |line| @err.puts "rackbench: announcement failed: #{line}" }
        outcome.announce_failures.empty? ? CLI::EXIT_OK : CLI::EXIT_FAILURE
      end

      private

      def report(outcome, regressions, options)
        by_id = regressions.to_h { |r| [r.id, r] }
        if options[:json]
          @out.puts JSON.pretty_generate(outcome.to_h.merge(
                                           "created" => outcome.created.map { |id| by_id[id].to_h },
                                           "changed" => outcome.changed.map { |id| by_id[id].to_h }
                                         ))
          return
        end

        @out.puts "Published #{outcome.testbeds} testbed#{"s" unless outcome.testbeds == 1} (#{outcome.lines} series) " \
                  "into #{outcome.site}: #{outcome.written.size} files written, #{outcome.unchanged.size} unchanged, " \
                  "#{outcome.removed.size} removed; #{outcome.summarised} run#{"s" unless outcome.summarised == 1} summarised"
        outcome.created.each { |id| @out.puts "  new: #{Regressions::Terminal.line(by_id[id])}" }
        outcome.changed.each { |id| @out.puts "  changed: #{Regressions::Terminal.line(by_id[id])}" }
        outcome.announced.each { |id| @out.puts "  announced: regression ##{id}" }
      end

      def parse(argv, options)
        settings = options[:settings]
        parse_options(argv, "Usage: rackbench publish --out DIR [options]") do |p|
          p.separator "A static site of every run in a store: timelines, regressions, comparisons, an Atom feed " \
                      "(doc/publish.md)."
          p.on("--out DIR", "the site's directory (written incrementally; new or empty the first time)") do |v|
            options[:out] = v
          end
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--title TEXT", "the site's title (default: rackbench)") { |v| settings[:title] = v }
          p.on("--url URL", "where the site is served: the feed's links become absolute") { |v| settings[:url] = v }
          p.on("--figures LIST", "the figures to publish and track, comma-separated (default: " \
                                 "#{Publish::DEFAULT_FIGURES.join(",")}; all: #{Report::BatchFigures.names.join(",")})") do |v|
            settings[:figures] = v.split(",").map(&:strip).reject(&:empty?)
          end
          p.on("--where KEY=VALUE", "only runs labelled so, e.g. branch=master (repeatable)") { |v| options[:where] << v }
          p.on("--order ORDER", Series::ORDERS, "runs in order of date (default) or revision (commit dates)") do |v|
            settings[:order] = v
          end
          p.on("--threshold PCT", "what a series flags before it learned its noise (default: the gate's, 2%)") do |v|
            settings[:default_threshold] = fraction(v, "--threshold")
          end
          p.on("--equivalence PCT", "a step smaller than ±PCT is no step (default 1%)") do |v|
            settings[:equivalence] = fraction(v, "--equivalence")
          end
          p.on("--instructions-equivalence PCT", "the same for instructions per request (default 0.1%)") do |v|
            settings[:instructions_equivalence] = fraction(v, "--instructions-equivalence")
          end
          p.on("--confidence PCT", "confidence level of each run's interval (default 95%)") do |v|
            settings[:confidence] = fraction(v, "--confidence")
          end
          p.on("--min-batches N", Integer, "ok batches a run needs for an interval (default 5)") do |v|
            settings[:min_batches] = v
          end
          p.on("--on-regression COMMAND", "run COMMAND once per new regression, its JSON on standard input " \
                                          "(doc/examples/nightly/announce-regression.sh)") { |v| options[:hook] = v }
          p.on("--on-regression-timeout SECONDS", Integer, "how long the command may take (default " \
                                                           "#{Publish::Hook::DEFAULT_TIMEOUT_S})") do |v|
            options[:hook_timeout_s] = v
          end
          p.on("--json", "print what was done as JSON") { options[:json] = true }
        end
      end
    end
  end
end
