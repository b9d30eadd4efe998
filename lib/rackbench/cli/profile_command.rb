# frozen_string_literal: true

require "json"
require "shellwords"
require_relative "command"
require_relative "report_options"
require_relative "source_run"
require_relative "speedscope_export"

module Rackbench
  module CLI
    # `rackbench profile FILE`: where the time goes. Runs only the profiled
    # trials of the experiment's configurations (one per configuration, or
    # the file's profile.trials), with the file's profile: key or StackProf
    # in cpu mode, into a results directory of its own
    # (rackbench-profile/ unless --results says otherwise), so that no
    # profiled run ever mixes with measured ones. Ends with each
    # configuration's top frames, the HTML report with its flame graphs,
    # and a speedscope file when asked.
    class ProfileCommand < Command
      include ReportOptions
      include SourceRun

      DEFAULT_RESULTS_DIR = "rackbench-profile"

      def run(argv)
        # Profiles are files beside the results database, which stays in the
        # results directory whatever $RACKBENCH_STORE says.
        options = { results: DEFAULT_RESULTS_DIR, store: nil }
        files = parse(argv, options)
        return CLI::EXIT_OK unless files
        raise UsageError, "profile takes one experiment file (see rackbench profile --help)" unless files.size == 1

        experiment = profiled(Experiment.load(files.first), options[:mode])
        code = run_source(experiment, options, resume: resume_command(files, options))
        write_speedscope(options) if options[:speedscope] && code != CLI::EXIT_INTERRUPTED
        code
      end

      private

      # The experiment with only its profiled trials: its own profile key
      # (in --mode when given), else StackProf's cpu mode.
      def profiled(experiment, mode)
        profile = experiment.profile || Profile::Settings.new(tool: "stackprof", mode: mode || "cpu")
        profile = profile.with_mode(mode) if mode
        experiment.with(profile: profile, profile_only: true)
      end

      def write_speedscope(options)
        Store.open(options[:results]) do |store|
          report = Report.new(store)
          path = SpeedscopeExport.write(report, options[:speedscope])
          @err.puts "Speedscope profile: #{path}" if path
        end
      end

      def resume_command(files, options)
        words = ["rackbench", "profile", *files, "--resume", "--results", options[:results]]
        words.push("--mode", options[:mode]) if options[:mode]
        words
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench profile [options] EXPERIMENT.yml") do |p|
          p.separator "Profiles each configuration of the experiment under its load (StackProf; doc/experiment.md, " \
                      "profile), measuring nothing."
          p.on("--mode MODE", Profile::Settings::MODES, "cpu, wall (Vernier) or object (default: the file's profile.mode, else cpu)") do |v|
            options[:mode] = v
          end
          p.on("--results DIR", "results directory (default #{DEFAULT_RESULTS_DIR}, apart from measured runs)") do |v|
            options[:results] = v
          end
          p.on("--speedscope FILE", "also write the profiles as a speedscope file (https://www.speedscope.app)") do |v|
            options[:speedscope] = v
          end
          p.on("--resume", "finish an interrupted profile run") { options[:resume] = true }
          p.on("--dry-run", "print the plan and stop") { options[:dry_run] = true }
          p.on("--json", "print the report document as JSON (progress goes to stderr)") { options[:json] = true }
          wide_option(p, options)
        end
      end
    end
  end
end
