# frozen_string_literal: true

require "json"
require "shellwords"
require_relative "command"
require_relative "report_options"
require_relative "../tune"

module Rackbench
  module CLI
    # `rackbench tune FILE`: the best processes × threads within the
    # file's tune: budget (Tune). Every step is a stored experiment in the
    # results directory; --resume continues an interrupted tune from them.
    # Ends with the answer (terminal or --json) and DIR/tune.html.
    class TuneCommand < Command
      include ReportOptions
      # :steps_options :: further Runner::Steps keywords (installs:, machine:,
      #                   runner_options:), for tests to run the command over
      #                   fakes (default: {}: the real ones)
      def initialize(out:, err:, steps_options: {})
        super(out: out, err: err)
        @steps_options = steps_options
      end

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        files = parse(argv, options)
        return CLI::EXIT_OK unless files
        raise UsageError, "tune takes one experiment file with a tune: section (see rackbench tune --help)" unless files.size == 1

        experiment = Experiment.load(files.first)
        progress = options[:json] ? @err : @out
        steps = Runner::Steps.new(results_dir: options[:results], store: store_target(options), out: progress, err: @err,
                                  **@steps_options)
        search = Tune::Search.new(experiment, steps: steps)
        return dry_run(search, steps) if options[:dry_run]

        if !options[:resume] && search.stored?
          raise UsageError, "#{options[:results]} already holds steps of this tune: continue it with --resume, " \
                            "or choose another --results"
        end

        analysis = Tune::Analysis.new(search.run, settings: search.settings, experiment: experiment)
        finish(analysis.to_h, options)
      rescue Interrupted => e
        @err.puts "rackbench: #{e.message}: resume with " \
                  "#{["rackbench", "tune", *files, "--resume", "--results", options[:results]].shelljoin}"
        CLI::EXIT_INTERRUPTED
      end

      private

      def finish(document, options)
        html = write_html(document, options[:results])
        options[:json] ? @out.puts(JSON.pretty_generate(document)) : @out.print(Tune::Terminal.new(document, width: output_width(options)).render)
        (options[:json] ? @err : @out).puts "Tune page: #{html}" if html
        document["best"] ? CLI::EXIT_OK : CLI::EXIT_FAILURE
      end

      # The steps are stored whatever happens here: a page that cannot be
      # written is a warning.
      def write_html(document, results_dir)
        Tune::HtmlPage.new(document).write(File.join(results_dir, "tune.html"))
      rescue Error, SystemCallError, LoadError => e
        @err.puts "rackbench: could not write tune.html: #{e.message}"
        nil
      end

      # The pilots' plans, then the candidates as far as the stored steps
      # decide them.
      def dry_run(search, steps)
        search.experiment.servers.each do |server|
          search.pilot_experiments(server).each do |pilot|
            @out.puts "Pilot #{pilot.name}:"
            @out.print steps.runner(pilot).plan
          end
        end
        parts = search.recall
        @out.puts
        parts.each do |part|
          runnable, unsupported = part.candidates.partition { |c| c.unsupported.nil? }
          unless unsupported.empty?
            @out.puts "#{part.server.label}: cannot run #{candidate_list(unsupported)} (#{unsupported.first.unsupported})"
          end
          unless part.model
            @out.puts "#{part.server.label}: candidates #{candidate_list(runnable)}; " \
                      "which fit the budget follows from the pilot's measured PSS"
            next
          end
          runnable.each do |c|
            fit = c.fits ? "runs" : "left out"
            @out.puts "#{part.server.label} #{c.processes}×#{c.threads}: predicted #{Units.megabytes(c.predicted_bytes)}, " \
                      "#{fit}#{" (stored)" if c.records}, #{c.connections} connections"
          end
        end
        CLI::EXIT_OK
      end

      def candidate_list(candidates)
        candidates.map { |c| "#{c.processes}×#{c.threads}" }.join(", ")
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench tune [options] EXPERIMENT.yml") do |p|
          p.separator "Searches processes × threads within the file's tune: budget (doc/experiment.md, \"tune\")."
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--resume", "continue an interrupted tune: stored steps run no more") { options[:resume] = true }
          p.on("--dry-run", "print the pilots' plans and the candidates as far as they are known, and stop") do
            options[:dry_run] = true
          end
          p.on("--json", "print the answer as JSON (rackbench-tune, doc/output.md; progress goes to stderr)") do
            options[:json] = true
          end
          wide_option(p, options)
        end
      end
    end
  end
end
