# frozen_string_literal: true

module Rackbench
  module Trial
    module Identity
      # The identity check of a trial whose processes have all ended (a
      # benchmark script): every process that reported (the script's own,
      # then each one it forked through Ruby) is compared with the
      # Expectation, after the run.
      #
      # Unlike a live server's (Check), nothing can be scanned for silent
      # processes once they are gone: the reports are all there is. A
      # script kind runs rackbench's own benchmark scripts, whose workers
      # fork through Ruby (Process._fork) and so always report.
      class Finished
        # :trial_dir :: the trial's directory (reports in its identity/)
        # :expectation :: an Expectation
        def initialize(trial_dir:, expectation:)
          @dir = Identity.directory(trial_dir)
          @expected = expectation
        end

        # Returns the identity record; raises IdentityMismatch naming the
        # first difference, or saying that no process, or more than one
        # first process, reported.
        def verify!
          reports = Identity.reports(@dir)
          roots = reports.values.reject { |report| reports.key?(report["ppid"]) }
          if roots.size != 1
            raise IdentityMismatch.new("identity check failed: #{root_problem(roots)}", record: nil)
          end

          main_pid = roots.first["pid"]
          processes = reports.values.sort_by { |report| [report["pid"] == main_pid ? 0 : 1, report["pid"]] }
                             .map { |report| { pid: report["pid"], report: report, source: "reported" } }
          Comparison.new(expectation: @expected, main_pid: main_pid).verify!(processes)
        end

        private

        def root_problem(roots)
          return "the script reported no identity (it did not start with rackbench's identity agent)" if roots.empty?

          "#{roots.size} unrelated processes reported (pids #{roots.map { |r| r["pid"] }.sort.join(", ")}), " \
            "one script was started"
        end
      end
    end
  end
end
