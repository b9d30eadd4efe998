# frozen_string_literal: true

require "json"
require "shellwords"
require_relative "command"
require_relative "report_options"
require_relative "source_run"

module Rackbench
  module CLI
    # `rackbench run [FILE]`: runs an experiment (the built-in quick one
    # without a file), storing every trial as it finishes, and ends with the
    # results table.
    class RunCommand < Command
      include ReportOptions
      include SourceRun

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        files = parse(argv, options)
        return CLI::EXIT_OK unless files
        raise UsageError, "run takes at most one experiment file (see rackbench run --help)" if files.size > 1
        raise UsageError, "--retry-failed only works with --resume" if options[:retry_failed] && !options[:resume]

        run_source(load_experiment(files.first, options), options, resume: resume_command(files, options))
      end

      private

      def load_experiment(file, options)
        experiment = file ? Experiment.load(file) : Experiment.default
        # Its matrix alone would run closed loop and answer another question.
        raise UsageError, "#{file} has a capacity: section: run it with rackbench capacity #{file}" if experiment.capacity

        overrides = options.slice(:seed, :batches)
        overrides.empty? ? experiment : experiment.with(**overrides)
      end

      def resume_command(files, options)
        words = ["rackbench", "run", *files, "--resume", "--results", options[:results]]
        words.push("--seed", options[:seed].to_s) if options[:seed]
        words.push("--batches", options[:batches].to_s) if options[:batches]
        words
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench run [options] [EXPERIMENT.yml]") do |p|
          p.separator "Runs an experiment (doc/experiment.md); without a file, the built-in quick one."
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          p.on("--resume", "finish an interrupted experiment: run only the trials not yet stored") do
            options[:resume] = true
          end
          p.on("--retry-failed", "with --resume: run the stored failed trials again (the failures are kept as history)") do
            options[:retry_failed] = true
          end
          p.on("--dry-run", "print the plan (trials in order, skipped combinations) and stop") do
            options[:dry_run] = true
          end
          p.on("--seed N", Integer, "override the experiment's seed") { |v| options[:seed] = v }
          p.on("--batches N", Integer, "override the experiment's number of batches") { |v| options[:batches] = v }
          p.on("--fail-fast", "stop at the first failed trial") { options[:fail_fast] = true }
          p.on("--json", "print the results as JSON (progress goes to stderr)") { options[:json] = true }
        end
      end
    end
  end
end
