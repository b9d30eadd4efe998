# frozen_string_literal: true

require "json"

module Rackbench
  module Trial
    # The identity check: every process of a trial proves it runs what
    # the trial's label names (the ruby and its JIT, the variables the
    # variant, app and experiment set, the server gem the bundle locks).
    # The processes report through the trial's directory (agent/identity.rb,
    # loaded by the launcher into every server, and by the script kind into
    # every benchmark script); Expectation says what they must report;
    # Comparison compares and builds the record stored with the trial,
    # from the reports Check collects from a live server (before it is
    # measured) or Finished from a script that has ended.
    module Identity
      # The script every process of a trial loads.
      AGENT = File.expand_path("../agent/identity.rb", __dir__)
      # Variables through which the runner tells the agent what to report:
      # the names of the checked variables (comma-separated), and the
      # server's gem.
      ENV_LIST_VAR = ServerEnv::CHECKED_LIST_VAR
      SERVER_GEM_VAR = "RACKBENCH_SERVER_GEM"
      # Set by the agent in each server process's ENV once it has reported:
      # found in the environment block of a program it exec'd (see Check).
      EXEC_MARK = "RACKBENCH_EXECED_BY"
      # Set for a server's processes: each runs a watcher that answers the
      # runner's late question (the file ASK_FILE in the directory) with
      # <pid>.late.json: what only a booted app knows (agent/identity.rb).
      LATE_VAR = "RACKBENCH_IDENTITY_LATE"
      ASK_FILE = "ask"
      LATE_SUFFIX = ".late.json"

      # Where the processes of a trial whose directory is trial_dir report.
      def self.directory(trial_dir)
        File.join(trial_dir, "identity")
      end

      # pid => report, for the reports written so far into dir (a
      # directory as given by directory).
      def self.reports(dir)
        read_reports(Dir.glob(File.join(dir, "*.json")).reject { |path| path.end_with?(LATE_SUFFIX) })
      end

      # pid => late answer (see LATE_VAR), for the answers written so far.
      def self.late_reports(dir)
        read_reports(Dir.glob(File.join(dir, "*#{LATE_SUFFIX}")))
      end

      def self.read_reports(paths)
        paths.each_with_object({}) do |path, reports|
          report = JSON.parse(File.read(path))
          reports[report["pid"]] = report if report.is_a?(Hash) && report["pid"].is_a?(Integer)
        rescue JSON::ParserError, SystemCallError
          next # written whole by rename; a bad file is not a report
        end
      end
      private_class_method :read_reports
    end
  end
end

require_relative "identity/maps"
require_relative "identity/runtime_settings"
require_relative "identity/expectation"
require_relative "identity/gem_check"
require_relative "identity/comparison"
require_relative "identity/check"
require_relative "identity/finished"
