# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench prune --older-than AGE`: deletes the trials of runs older
    # than AGE and keeps their summaries (Publish::Retention): the site's
    # timelines stay whole, the store stops growing.
    class PruneCommand < Command
      include ReportOptions

      AGE = /\A(\d+)\s*(h|d|w)\z/
      UNIT_S = { "h" => 3600, "d" => 86_400, "w" => 7 * 86_400 }.freeze

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        rest = parse_options(argv, "Usage: rackbench prune --older-than AGE [options]") do |p|
          p.separator "Delete the trials of runs older than AGE (90d, 26w, 48h), keeping each run's medians, " \
                      "intervals and batch values for publish's timelines (doc/publish.md)."
          p.on("--older-than AGE", "runs created more than AGE ago: Nh, Nd or Nw") { |v| options[:age] = v }
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--dry-run", "say what would be deleted, delete nothing") { options[:dry_run] = true }
          p.on("--json", "print what was done as JSON") { options[:json] = true }
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}' (see rackbench prune --help)" unless rest.empty?

        cutoff = Time.now - age_s(options[:age])
        outcome = with_store(options) { |store| Publish::Retention.new(store).prune(cutoff, dry_run: options[:dry_run]) }
        print(outcome, options)
        CLI::EXIT_OK
      end

      private

      def age_s(text)
        raise UsageError, "prune needs --older-than AGE (90d, 26w, 48h)" unless text

        match = AGE.match(text.strip)
        raise UsageError, "--older-than takes Nh, Nd or Nw (90d, 26w, 48h), got '#{text}'" unless match && match[1].to_i.positive?

        match[1].to_i * UNIT_S.fetch(match[2])
      end

      def print(outcome, options)
        return @out.puts(JSON.pretty_generate(outcome.to_h)) if options[:json]

        verb = outcome.dry_run ? "Would prune" : "Pruned"
        @out.puts "#{verb} #{outcome.experiments.size} run#{"s" unless outcome.experiments.size == 1}: " \
                  "#{outcome.trials} trials and #{outcome.earlier_attempts} earlier attempts deleted, their medians kept; " \
                  "store #{Units.megabytes(outcome.bytes_before)} -> #{Units.megabytes(outcome.bytes_after)}"
      end
    end
  end
end
