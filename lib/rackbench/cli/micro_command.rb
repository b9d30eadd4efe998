# frozen_string_literal: true

require "json"
require "shellwords"
require_relative "command"
require_relative "report_options"
require_relative "source_run"

module Rackbench
  module CLI
    # `rackbench micro BENCHMARK [EXPERIMENT_FILE] [options]`: runs a
    # micro-benchmark outside HTTP on each ruby (doc/micro.md), storing
    # every run as a trial in the results database as it finishes, and
    # ends with the statistics report (or its JSON document).
    class MicroCommand < Command
      include ReportOptions
      include SourceRun

      BENCHMARKS = { "fibers" => "threads, forked processes and fibers exchanging messages with a master over pipes" }.freeze

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, rubies: [] }
        args = parse(argv, options)
        return CLI::EXIT_OK unless args

        benchmark, *files = args
        check_benchmark(benchmark)
        raise UsageError, "micro #{benchmark} takes at most one experiment file" if files.size > 1

        run_source(build_settings(files.first, options), options, resume: resume_command(argv))
      end

      private

      def check_benchmark(name)
        list = BENCHMARKS.keys.join(", ")
        raise UsageError, "micro needs a benchmark name (#{list}); see rackbench micro --help" if name.nil?
        raise UsageError, "unknown micro-benchmark '#{name}' (available: #{list})" unless BENCHMARKS.key?(name)
      end

      def build_settings(file, options)
        experiment = file && Experiment.load(file)
        Micro::Settings.build(
          experiment: experiment, rubies: options[:rubies], **options.slice(:modes, :workers, :messages, :total_messages,
                                                                             :warmup, :work, :batches, :seed, :timeout, :cpus)
        )
      end

      # The same command with --resume (once).
      def resume_command(argv)
        words = ["rackbench", "micro", *argv]
        words << "--resume" unless argv.include?("--resume")
        words
      end

      def parse(argv, options)
        banner = "Usage: rackbench micro BENCHMARK [options] [EXPERIMENT.yml]\n\n" \
                 "Benchmarks:\n#{BENCHMARKS.map { |n, text| format("  %-8s %s", n, text) }.join("\n")}\n\n" \
                 "Rubies, seed, batches and name come from the experiment file when given (doc/micro.md).\n"
        parse_options(argv, banner) do |p|
          p.on("--ruby SPEC", "a ruby to run, e.g. ruby, jruby, 3.3, 'ruby --yjit' (repeatable; replaces the file's rubies)") do |v|
            options[:rubies] << v
          end
          p.on("--modes LIST", "worker kinds: threads,processes,fibers (default: all)") { |v| options[:modes] = v }
          p.on("--workers LIST", "worker counts (default: 1,10,100)") { |v| options[:workers] = v }
          p.on("--messages N", "messages per worker and round (default: --total-messages / workers)") do |v|
            options[:messages] = v
          end
          p.on("--total-messages N", "messages per round over all workers (default: 100000)") do |v|
            options[:total_messages] = v
          end
          p.on("--warmup N", "untimed rounds before the measured one (default: 1)") { |v| options[:warmup] = v }
          p.on("--work N", "checksum passes over each message, the worker's work (default: 1)") { |v| options[:work] = v }
          p.on("--batches N", "replicates of every configuration (default: the file's, else 3)") { |v| options[:batches] = v }
          p.on("--seed N", "seed of the order (default: the file's, else 1)") { |v| options[:seed] = v }
          p.on("--timeout D", "deadline of one run, e.g. 300s, 5m (default: 300s)") { |v| options[:timeout] = v }
          p.on("--cpus LIST", "pin runs to these CPUs, e.g. 0,1 or all (default: the server CPUs of rackbench run)") do |v|
            options[:cpus] = v
          end
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--resume", "finish an interrupted run: run only the trials not yet stored") { options[:resume] = true }
          p.on("--dry-run", "print the plan (trials in order, skipped combinations) and stop") { options[:dry_run] = true }
          label_option(p, options)
          p.on("--json", "print the report document as JSON (doc/output.md; progress goes to stderr)") { options[:json] = true }
          wide_option(p, options)
        end
      end
    end
  end
end
