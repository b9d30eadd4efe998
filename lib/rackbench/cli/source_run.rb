# frozen_string_literal: true

module Rackbench
  module CLI
    # What `rackbench run` and `rackbench micro` share once they know their
    # source of configurations (an Experiment, a Micro::Settings): print the
    # plan for --dry-run, or run it with the Runner and end with the report;
    # after Ctrl-C, say how to resume. Included in their command classes
    # (which also include ReportOptions).
    module SourceRun
      private

      # --label KEY=VALUE, repeatable, into options[:labels] (the pairs as given).
      def label_option(parser, options)
        parser.on("--label KEY=VALUE", "label the run, e.g. branch=main (repeatable): stored with it, shown by " \
                                       "gate and history, part of its identity (doc/ci.md)") do |v|
          (options[:labels] ||= []) << v
        end
      end

      # Returns the exit code. resume :: the command that resumes this run,
      # words for Shellwords.
      def run_source(source, options, resume:)
        runner = Runner.new(source: source, results_dir: options[:results], store: store_target(options),
                            resume: options[:resume],
                            retry_failed: options[:retry_failed] || false,
                            fail_fast: options[:fail_fast], out: options[:json] ? @err : @out, err: @err,
                            detect: options[:detect], labels: Labels.parse(options[:labels] || []),
                            ready_timeout_s: options.fetch(:ready_timeout_s, Runner::READY_TIMEOUT_S))
        if options[:dry_run]
          @out.print runner.plan_listing
          return CLI::EXIT_OK
        end

        summary = runner.run
        print_experiment_report(options[:results], summary, json: options[:json], baseline: options[:baseline],
                                                            store: store_target(options), width: output_width(options))
        summary.failed.zero? ? CLI::EXIT_OK : CLI::EXIT_FAILURE
      rescue Interrupted => e
        @err.puts "rackbench: #{e.message}: resume with #{resume.shelljoin}"
        CLI::EXIT_INTERRUPTED
      end
    end
  end
end
