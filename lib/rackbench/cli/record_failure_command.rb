# frozen_string_literal: true

require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench record-failure FILE --reason TEXT`: a run that could not
    # start (a ruby that did not build) stored as a failed run, so that
    # `rackbench publish` shows it on the timeline (Publish::FailedRun).
    class RecordFailureCommand < Command
      include ReportOptions

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, labels: [] }
        rest = parse_options(argv, "Usage: rackbench record-failure EXPERIMENT.yml --reason TEXT [options]") do |p|
          p.separator "Record a run of EXPERIMENT.yml that could not start, labelled as the run would have been " \
                      "(doc/publish.md, \"Failed runs\")."
          p.on("--reason TEXT", "why, in one line") { |v| options[:reason] = v }
          p.on("--log FILE", "the failure's log (its path is kept)") { |v| options[:log] = v }
          p.on("--stage NAME", "what failed (default: build)") { |v| options[:stage] = v }
          p.on("--label KEY=VALUE", "the run's labels, as given to rackbench run (repeatable)") { |v| options[:labels] << v }
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "record-failure takes one experiment file (see --help)" unless rest.size == 1

        reason = options[:reason].to_s.strip
        raise UsageError, "record-failure needs --reason TEXT" if reason.empty?

        given = Labels.parse(options[:labels])
        id = Store.open(store_target(options)) do |store|
          Publish::FailedRun.record(store, rest.first, given: given, reason: reason.lines.first.strip, log: options[:log],
                                                       stage: options[:stage] || "build")
        end
        @out.puts "Recorded a failed run of #{rest.first} (experiment id #{id}): #{reason.lines.first.strip}"
        CLI::EXIT_OK
      end
    end
  end
end
