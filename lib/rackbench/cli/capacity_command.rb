# frozen_string_literal: true

require "fileutils"
require "json"
require "shellwords"
require_relative "command"
require_relative "report_options"
require_relative "../capacity"

module Rackbench
  module CLI
    # `rackbench capacity FILE`: per configuration of an experiment with a
    # capacity: section, the highest open-loop rate that holds its latency
    # target (Capacity). Every step is a stored experiment in the results
    # directory; --resume replays the stored steps and continues. Ends with
    # the answers' table (or --json) and writes DIR/capacity.html.
    #
    # Exit codes: 0 when every search concluded (found, capped or none);
    # 1 when a search stopped unresolved (invalid steps, or confirmations
    # that kept failing); 2 for usage errors; 130 when interrupted.
    class CapacityCommand < Command
      include ReportOptions
      LOG_FILE = "capacity.log"
      JSON_FILE = "capacity.json"

      # :steps :: a callable (results_dir, out, err) => the Runner::Steps
      #           the steps run with (default: Runner::Steps.new; tests give
      #           one over fakes)
      def initialize(out:, err:, steps: nil)
        super(out: out, err: err)
        @steps = steps || lambda do |dir, out_io, err_io, store = nil|
          Runner::Steps.new(results_dir: dir, store: store, out: out_io, err: err_io)
        end
      end

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        files = parse(argv, options)
        return CLI::EXIT_OK unless files
        raise UsageError, "capacity takes one experiment file (see rackbench capacity --help)" unless files.size == 1

        experiment = load_experiment(files.first, options)
        options[:dry_run] ? dry_run(experiment, options) : search(experiment, files.first, options)
      end

      private

      def load_experiment(file, options)
        experiment = Experiment.load(file)
        overrides = options.slice(:seed, :batches)
        experiment = experiment.with(**overrides) unless overrides.empty?
        return experiment if experiment.capacity

        raise UsageError, "#{file} has no capacity: section (a latency target such as capacity: { p99: 50ms }; " \
                          "see doc/experiment.md)"
      end

      def search(experiment, file, options)
        dir = options[:results]
        FileUtils.mkdir_p(dir)
        progress = options[:json] ? @err : @out
        File.open(File.join(dir, LOG_FILE), "a") do |log|
          driver = Capacity::Driver.new(experiment, steps: @steps.call(dir, log, @err, store_target(options)),
                                                    on_step: ->(job, step) { progress.puts(step_line(job, step, experiment.capacity)) })
          if !options[:resume] && driver.started?
            raise UsageError, "#{dir} already holds steps of capacity search #{experiment.name}: add --resume to " \
                              "continue it, or choose another --results directory"
          end
          announce(progress, experiment, driver, dir)
          finish(Capacity::Summary.new(experiment, driver.run), dir, options)
        end
      rescue Interrupted => e
        @err.puts "rackbench: #{e.message}: resume with #{resume_command(file, options).shelljoin}"
        CLI::EXIT_INTERRUPTED
      end

      def announce(io, experiment, driver, dir)
        settings = experiment.capacity
        io.puts "Capacity #{experiment.name}: #{settings.target_text}, errors <= " \
                "#{Units.percent_trimmed(settings.max_error_ratio, digits: 2)}, resolution #{settings.resolution_text}, " \
                "#{driver.jobs.size} searches (#{experiment.configurations.size} configurations x " \
                "#{experiment.batches} batches); steps stored in #{dir}, their runs logged in #{File.join(dir, LOG_FILE)}"
      end

      def finish(summary, dir, options)
        doc = summary.to_h
        File.write(File.join(dir, JSON_FILE), JSON.pretty_generate(doc))
        html = Capacity::HtmlPage.new(doc).write(dir)
        if options[:json]
          @out.puts JSON.pretty_generate(doc)
        else
          @out.puts Capacity::Table.render(doc, width: output_width(options))
          @out.puts "Curves: #{html}"
        end
        unresolved = doc["configs"].flat_map { |c| c["searches"] }.any? { |s| s["status"] == "unresolved" }
        unresolved ? CLI::EXIT_FAILURE : CLI::EXIT_OK
      end

      # "[c2 b1] step 3 bisect 300 req/s: pass (p99 12.30ms, errors 0.00%)"
      def step_line(job, step, settings)
        v = step.verdict
        measured = v.latency_us && v.latency_us[settings.percentile_key]
        figures = [("#{settings.percentile_key} #{Units.latency_us(measured)}" if measured),
                   ("errors #{Units.percent(v.error_ratio)}" if v.error_ratio),
                   ("delivery #{Units.percent(v.delivery_ratio, digits: 3)}" if v.delivery_ratio)].compact.join(", ")
        line = "  [c#{job.config_number} b#{job.batch}] step #{step.ask.index} #{step.phase} #{step.rate} #{settings.unit}: " \
               "#{step.status == :invalid ? "INVALID" : step.status}"
        line += " (#{figures})" unless figures.empty?
        line += ": #{v.reason}" if v.reason && step.status != :pass
        line
      end

      def dry_run(experiment, options)
        steps = @steps.call(options[:results], @out, @err, store_target(options))
        driver = Capacity::Driver.new(experiment, steps: steps)
        settings = experiment.capacity
        @out.puts "Capacity #{experiment.name}: #{settings.target_text}, resolution #{settings.resolution_text}, " \
                  "start #{Units.rate_rounded(settings.start_rate)} #{settings.unit}, ramp x#{settings.ramp}, max " \
                  "#{Units.rate_rounded(settings.max_rate)} #{settings.unit}, #{settings.confirmations} confirmations"
        @out.puts "Searches in order (each step's rate follows from the last steps' verdicts):"
        driver.jobs.each do |job|
          @out.puts "  batch #{job.batch} (seed #{job.seed}) c#{job.config_number}: #{job.config} " \
                    "-> first step #{driver.step_experiment(job).name}"
        end
        @out.puts "First step's plan:"
        @out.print steps.runner(driver.step_experiment(driver.jobs.first)).plan
        CLI::EXIT_OK
      end

      def resume_command(file, options)
        words = ["rackbench", "capacity", file, "--resume", "--results", options[:results]]
        words.push("--store", options[:store]) if options[:store]
        words.push("--seed", options[:seed].to_s) if options[:seed]
        words.push("--batches", options[:batches].to_s) if options[:batches]
        words
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench capacity [options] EXPERIMENT.yml") do |p|
          p.separator "Per configuration, the highest open-loop rate that holds the file's capacity: target " \
                      "(doc/experiment.md)."
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--resume", "continue an interrupted search: stored steps are replayed, not run again") do
            options[:resume] = true
          end
          p.on("--dry-run", "print the searches and the first step's plan, and stop") { options[:dry_run] = true }
          p.on("--seed N", Integer, "override the experiment's seed") { |v| options[:seed] = v }
          p.on("--batches N", Integer, "override the experiment's number of batches") { |v| options[:batches] = v }
          p.on("--json", "print the answers as JSON (progress goes to stderr)") { options[:json] = true }
          wide_option(p, options)
        end
      end
    end
  end
end
