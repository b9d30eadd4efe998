# frozen_string_literal: true

require "json"
require "tmpdir"
require "fileutils"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench check [FILE]`: the first-run doctor. Boots each app once
    # per ruby and server, as its first trial would, and says what will
    # fail before hours are spent: gem install, boot time, identity and app
    # checks, the app's latency under the experiment's load (calibration),
    # and the load its trials would use. Measures and stores nothing.
    class CheckCommand < Command
      include ReportOptions

      def run(argv)
        options = {}
        files = parse(argv, options)
        return CLI::EXIT_OK unless files
        raise UsageError, "check takes at most one experiment file (see rackbench check --help)" if files.size > 1

        experiment = files.first ? Experiment.load(files.first) : Experiment.default
        check_store(options, json: options[:json])
        with_results_dir(options[:results]) do |dir|
          examinations = examine(experiment, dir, json: options[:json])
          failed = examinations.count { |e| !e.ok? }
          if options[:json]
            @out.puts JSON.pretty_generate(document(experiment, examinations))
          else
            summary(files.first, examinations, @runner.plan)
          end
          [failed.zero? ? CLI::EXIT_OK : CLI::EXIT_FAILURE, failed.zero?]
        end
      rescue Interrupted, Interrupt
        @err.puts "rackbench: check interrupted"
        CLI::EXIT_INTERRUPTED
      end

      private

      # With --store (or $RACKBENCH_STORE), the results database the run
      # would write to: reached, and its schema one this rackbench reads (a
      # run upgrades an older one, as this does). A Store::Error, one
      # line, ends the check before any server boots.
      def check_store(options, json:)
        target = store_target(options.merge(results: nil))
        return unless target

        location = Store.open(target, &:location)
        (json ? @err : @out).puts "store: #{location} (results schema #{Store::Schema::VERSION})"
      end

      # Logs and the servers' directories go to a directory of their own,
      # removed when every check passed and kept (and named) otherwise, also
      # after Ctrl-C or an error. A directory that holds a run's results is
      # refused: the check would write its logs over the stored trials'.
      def with_results_dir(given)
        if given && File.exist?(File.join(given, Store::Connection::DB_FILE))
          raise UsageError, "#{given} holds the results of a run: give check another --results directory"
        end

        dir = given || Dir.mktmpdir("rackbench-check")
        clean = false
        code, clean = yield dir
        code
      ensure
        if dir
          if clean && !given
            FileUtils.rm_rf(dir)
          else
            @err.puts "rackbench: logs of the check in #{File.join(dir, "logs")}"
          end
        end
      end

      def examine(experiment, dir, json:)
        out = json ? @err : @out
        runner = @runner = Runner.new(source: experiment, results_dir: dir, out: out, err: @err)
        trials = runner.examined_trials
        out.puts "Checking #{trials.size} configuration(s) of #{experiment.name}: one per ruby, server and app, " \
                 "the most processes x threads of each"
        runner.plan.skipped.each { |s| out.puts "  skipped: #{s.config} (#{s.reason})" }
        @preparation = runner.preparation(trials)
        @preparation.texts.each { |text| out.puts "  first: #{text}" }
        runner.examine { |examination| out.puts(*lines(examination)) }
      end

      def lines(examination)
        head = "#{examination.ok? ? "ok" : "FAILED"}  #{examination.config}"
        details = []
        details << "gems ready in #{Units.seconds(examination.bundle_s, digits: 1)}" if examination.bundle_s
        details << "boot #{Units.seconds(examination.boot_s, digits: 1)}" if examination.boot_s
        details << "stop #{Units.seconds(examination.stop_s, digits: 1)}" if examination.stop_s
        body = ["    #{details.join(", ")}"]
        if examination.identity
          ran = Report::ConfigSummary::Ran.key(examination.identity)
          body << "    identity and app check passed: #{Report::ConfigSummary::Ran.text(ran)}"
        end
        body << "    calibration: #{examination.calibration.summary}" if examination.calibration
        body << "    load: #{load_text(examination)}" if examination.load && examination.calibration
        body << "    #{examination.reason.to_s.lines.first&.strip}" unless examination.ok?
        [head, *body]
      end

      def load_text(examination)
        load = examination.load
        mode = load.rate ? "open loop at #{Units.rate(load.rate)}/s" : "closed loop"
        timeout = "timeout #{Units.seconds(load.timeout_s, digits: 1)} (#{examination.timeout_source})"
        window = load.count? ? "#{load.count} requests" : Units.seconds(load.duration_s, digits: 1)
        text = "#{load.connections} connections, #{mode}, warmup #{Units.seconds(load.warmup_s, digits: 1)} + " \
               "window #{window}, #{timeout}; about " \
               "#{Experiment::Plan.format_duration(examination.trial_s)} per trial"
        slow = examination.calibration.timeout_s
        if examination.timeout_source == "experiment" && load.timeout_s < slow
          text += "; the app needs about #{Units.seconds(slow, digits: 1)}: raise load.timeout"
        end
        text
      end

      def summary(file, examinations, plan)
        failed = examinations.count { |e| !e.ok? }
        command = "rackbench run#{" #{file}" if file}"
        @out.puts(if failed.zero?
                    "All #{examinations.size} passed#{estimate(examinations, plan)}: #{command}"
                  else
                    "#{failed} of #{examinations.size} failed: fix them before the run"
                  end)
      end

      # The whole run's time from the boots, stops and loads measured here:
      # each trial counts what its (ruby, server, app) took.
      def estimate(examinations, plan)
        per_triple = examinations.select(&:trial_s).to_h { |e| [triple(e.config), e.trial_s] }
        return "" if per_triple.empty?

        fallback = per_triple.values.sum / per_triple.size
        total_s = plan.trials.sum { |trial| per_triple.fetch(triple(trial.config), fallback) }
        "; the run's #{plan.size} trials would take about #{Experiment::Plan.format_duration(total_s)}"
      end

      def triple(config) = config.dims.values_at("ruby", "server", "app")

      def document(experiment, examinations)
        { "format" => "rackbench-check", "format_version" => 1, "experiment" => experiment.name,
          "preparation" => @preparation.to_a, "examinations" => examinations.map(&:to_h),
          "ok" => examinations.all?(&:ok?) }
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench check [options] [EXPERIMENT.yml]") do |p|
          p.separator "Boots each app once per ruby and server and says what would fail, before a run."
          p.on("--results DIR", "where to keep the logs (default: a temporary directory, kept if a check fails)") do |v|
            options[:results] = v
          end
          store_option(p, options)
          p.on("--json", "print the findings as JSON (doc/output.md; progress goes to stderr)") { options[:json] = true }
        end
      end
    end
  end
end
