# frozen_string_literal: true

require "fileutils"
require "json"
require "shellwords"
require "stringio"
require_relative "command"
require_relative "report_options"
require_relative "../bisect"

module Rackbench
  module CLI
    # `rackbench bisect FILE --good REF --bad REF`: the commit of a ruby
    # built from a git repository, or of an app in one, that made a figure
    # worse (Bisect; doc/bisect.md). Says what it will cost first
    # (--dry-run: only that); every commit measured is a stored
    # experiment in the results directory, so --resume after Ctrl-C or
    # kill -9 measures no commit twice. Ends with the commits measured and
    # the steps found (or --json), and writes DIR/bisect.json,
    # DIR/bisect.md and DIR/bisect.html.
    #
    # Exit codes: 0 when it concluded (every step found was confirmed, or
    # good and bad do not differ); 4 (cannot say) when it could not (the
    # ends or a confirmation cannot say, a step was not confirmed, no
    # single commit makes a step); 1 when an end cannot be measured; 2
    # for usage errors; 130 when interrupted.
    class BisectCommand < Command
      include ReportOptions
      LOG_FILE = "bisect.log"
      JSON_FILE = "bisect.json"
      MARKDOWN_FILE = "bisect.md"

      # :steps :: a callable (results_dir, out, err, store) => the
      #           Runner::Steps the commits run with (default:
      #           Runner::Steps.new; tests give one over fakes)
      def initialize(out:, err:, steps: nil)
        super(out: out, err: err)
        @steps = steps || lambda do |dir, out_io, err_io, store|
          Runner::Steps.new(results_dir: dir, store: store, out: out_io, err: err_io)
        end
      end

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        files = parse(argv, options)
        return CLI::EXIT_OK unless files
        raise UsageError, "bisect takes one experiment file (see rackbench bisect --help)" unless files.size == 1

        experiment = Experiment.load(files.first)
        settings = Bisect::Settings.build(good: options[:good], bad: options[:bad],
                                          **options.slice(:over, :measure, :threshold, :min_step, :min_batches,
                                                          :max_batches, :confidence).compact,
                                          default_measure: default_measure(experiment))
        bisect(experiment, files.first, settings, options)
      end

      private

      # Instructions per request where valgrind is installed (or the file
      # counts them already), else requests/s.
      def default_measure(experiment)
        counts = experiment.measure.include?(Instructions::INSTRUCTIONS) || Instructions::Valgrind.find.reason.nil?
        counts ? "instructions" : "rps"
      end

      def bisect(experiment, file, settings, options)
        dir = options[:results]
        # stdout holds only the document asked for (--json, --markdown -).
        output = options[:json] || options[:markdown] == "-" ? @err : @out
        return dry_run(experiment, settings, options, output) if options[:dry_run]

        FileUtils.mkdir_p(dir)
        File.open(File.join(dir, LOG_FILE), "a") do |log|
          log.sync = true # the log is what to follow while a build or a batch runs
          width = Text::Width.for(output, wide: options[:wide])
          progress = Bisect::Progress.new(output, log_path: File.join(dir, LOG_FILE), width: width)
          driver = driver(experiment, settings, options, log, progress.callbacks)
          progress.driver = driver
          say_cost(driver, settings, output, width)
          if !options[:resume] && driver.started?
            raise UsageError, "#{dir} already holds commits of bisect #{experiment.name}: add --resume to continue " \
                              "it, or choose another --results directory"
          end
          output.puts Text::Wrap.prose("  runs stored in #{dir}, their progress logged in #{File.join(dir, LOG_FILE)}", width)
          finish(driver.run, dir, options)
        end
      rescue Interrupted, Interrupt => e
        message = e.is_a?(Interrupted) ? e.message : "interrupted"
        @err.puts "rackbench: #{message}: resume with #{resume_command(file, options).shelljoin}"
        CLI::EXIT_INTERRUPTED
      end

      # What the bisection would take; nothing is built, run or written.
      def dry_run(experiment, settings, options, output)
        driver = driver(experiment, settings, options, StringIO.new, {})
        say_cost(driver, settings, output, Text::Width.for(output, wide: options[:wide]))
        CLI::EXIT_OK
      end

      def say_cost(driver, settings, output, width)
        Bisect::Progress.cost(driver, settings).lines.each { |line| output.puts Text::Wrap.prose(line, width) }
      end

      def driver(experiment, settings, options, log, callbacks)
        steps = @steps.call(options[:results], log, @err, store_target(options))
        Bisect::Driver.new(experiment: experiment, settings: settings, steps: steps, store: store_target(options),
                           results_dir: options[:results], **callbacks)
      end

      def finish(result, dir, options)
        doc = JSON.parse(JSON.generate(result.to_h))
        File.write(File.join(dir, JSON_FILE), JSON.pretty_generate(doc))
        markdown = Bisect::Markdown.new(doc).render
        File.write(File.join(dir, MARKDOWN_FILE), markdown)
        html = Bisect::HtmlPage.new(doc).write(dir)
        @out.print(markdown) if options[:markdown] == "-"
        File.write(options[:markdown], markdown) if options[:markdown] && options[:markdown] != "-"
        if options[:json]
          @out.puts JSON.pretty_generate(doc)
        elsif options[:markdown] == "-"
          nil
        elsif doc["status"] == Bisect::Search::NO_STEP
          # The one line that stops a bisection before it starts.
          @out.puts "rackbench bisect: nothing to bisect: bad #{figure_text(doc, "candidate_median")} against good " \
                    "#{figure_text(doc, "baseline_median")}: #{doc["ends"]["text"]}, not beyond the " \
                    "#{Units.percent_trimmed(doc["settings"]["threshold"])} threshold"
        else
          @out.print Bisect::Terminal.new(doc, width: output_width(options)).render
          @out.puts "Chart: #{html}"
        end
        exit_code(doc)
      end

      def figure_text(doc, key)
        figure = Report::BatchFigures.fetch(doc["settings"]["figure"])
        "#{Bisect.figure_text(figure, doc["ends"][key])} #{figure.words}"
      end

      def exit_code(doc)
        case doc["status"]
        when Bisect::Search::NO_STEP then CLI::EXIT_OK
        when Bisect::Search::FOUND
          confirmed = doc["steps"].all? { |s| s.dig("confirmation", "status") == Bisect::Result::CONFIRMED }
          confirmed ? CLI::EXIT_OK : CLI::EXIT_CANNOT_SAY
        when Bisect::Search::UNMEASURABLE then CLI::EXIT_FAILURE
        else CLI::EXIT_CANNOT_SAY
        end
      end

      def resume_command(file, options)
        words = ["rackbench", "bisect", file, "--good", options[:good], "--bad", options[:bad], "--resume",
                 "--results", options[:results]]
        { over: "--over", measure: "--measure", store: "--store", min_batches: "--min-batches",
          max_batches: "--max-batches" }.each { |key, flag| words.push(flag, options[key].to_s) if options[key] }
        { threshold: "--threshold", min_step: "--min-step", confidence: "--confidence" }.each do |key, flag|
          words.push(flag, "#{format("%g", options[key] * 100)}%") if options[key]
        end
        words
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench bisect [options] EXPERIMENT.yml --good REF --bad REF") do |p|
          p.separator "The commit of a ruby built from git (build: { source: DIR }) or of an app (path: in a git " \
                      "work tree) that made a figure worse (doc/bisect.md)."
          p.on("--good REF", "a commit, tag or branch where the figure was good") { |v| options[:good] = v }
          p.on("--bad REF", "a later commit where it is worse") { |v| options[:bad] = v }
          p.on("--over WHAT", "ruby or app (or ruby=NAME, app=NAME): whose history, when the file has several") do |v|
            options[:over] = v
          end
          p.on("--measure FIGURE", "the figure judged: #{Report::BatchFigures.names.join(", ")} (default: " \
                                   "instructions where valgrind is installed, else rps)") { |v| options[:measure] = v }
          p.on("--threshold PCT", "how much worse bad must be than good (default 1%)") do |v|
            options[:threshold] = fraction(v, "--threshold")
          end
          p.on("--min-step PCT", "the smallest step between two commits searched (default: half the threshold)") do |v|
            options[:min_step] = fraction(v, "--min-step")
          end
          p.on("--min-batches N", Integer, "batches each commit runs first (default 5)") { |v| options[:min_batches] = v }
          p.on("--max-batches N", Integer, "the most batches a commit runs while its comparisons cannot say " \
                                           "(default: twice --min-batches)") { |v| options[:max_batches] = v }
          p.on("--confidence PCT", "confidence level of the intervals (default 95%)") do |v|
            options[:confidence] = fraction(v, "--confidence")
          end
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--resume", "continue an interrupted bisection: commits measured are replayed from the store") do
            options[:resume] = true
          end
          p.on("--dry-run", "say what the bisection would take, and stop") { options[:dry_run] = true }
          wide_option(p, options)
          p.on("--json", "print the bisect document as JSON (progress goes to stderr)") { options[:json] = true }
          p.on("--markdown FILE", "write the result in Markdown to FILE, for an issue or a pull request " \
                                  "('-': standard output, progress to stderr)") { |v| options[:markdown] = v }
        end
      end
    end
  end
end
