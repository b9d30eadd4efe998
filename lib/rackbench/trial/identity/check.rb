# frozen_string_literal: true

require_relative "../../agent_files"

module Rackbench
  module Trial
    module Identity
      # Collects what every process of a booted server reports about itself
      # and compares it with the trial's Expectation (Comparison). A
      # mismatch fails the trial before it measures, with a reason that
      # names the difference ("YJIT off, the variant asks for --yjit"); a
      # match gives the record stored with the trial: what really ran.
      #
      # Which processes must report: every live process of the server's
      # tree that runs the expected executable. One forked through Ruby
      # reports itself (Process._fork; every shipped server forks so, iodine
      # and agoo included). A silent process of the same ruby that was
      # exec'd, not forked (a helper the app started with spawn), is no
      # server process: it is recorded under "others". A silent fork fails
      # the check: nothing proves what it runs. Other executables (a shell)
      # are not the server.
      class Check
        # How long a Ruby-forked process may take to write its report after
        # readiness: it writes right after its fork, long before it serves,
        # so this only matters on a machine busy with something else.
        REPORT_WAIT_S = 5.0
        POLL_INTERVAL_S = 0.05

        # :server :: the ServerProcess (pid, pgid)
        # :trial_dir :: the trial's directory (reports in its identity/)
        # :expectation :: an Expectation
        # :report_wait_s :: see REPORT_WAIT_S
        # :proc_dir :: where /proc is (tests use a fake tree)
        def initialize(server:, trial_dir:, expectation:, report_wait_s: REPORT_WAIT_S, proc_dir: ProcessTree::PROC_DIR)
          @server = server
          @dir = Identity.directory(trial_dir)
          @expected = expectation
          @report_wait_s = report_wait_s
          @proc_dir = proc_dir
        end

        # Returns the identity record (a Hash, JSON-ready); raises
        # IdentityMismatch naming the first difference and how many more.
        def verify!
          @others = []
          processes = with_late_answers(collect)
          Comparison.new(expectation: @expected, main_pid: @server.pid).verify!(processes, others: @others)
        end

        private

        # Asks the watching processes (those whose report says "watching")
        # for what only a booted app knows, and waits up to report_wait_s
        # for their answers: each process entry gains :late (its answer, or
        # nil when none came; a late answer only informs, it never fails the
        # check).
        def with_late_answers(processes)
          watching = processes.select { |p| p[:source] == "reported" && p[:report]["watching"] }
          return processes if watching.empty?

          File.write(File.join(@dir, ASK_FILE), "")
          answers = {}
          AgentFiles.wait(deadline_s: @report_wait_s, poll_s: POLL_INTERVAL_S) do
            answers = Identity.late_reports(@dir)
            watching.reject { |p| answers.key?(p[:pid]) }
          end
          processes.map { |p| p.merge(late: answers[p[:pid]]) }
        end

        # The server's ruby processes, each with its report (or the report
        # of the ancestor it was forked from), waiting up to report_wait_s
        # for reports still being written.
        def collect
          ruby = reports = table = nil
          AgentFiles.wait(deadline_s: @report_wait_s, poll_s: POLL_INTERVAL_S) do
            table = ProcessTree.scan(proc_dir: @proc_dir)
            entries = ProcessTree.entries(@server.pid, pgid: @server.pgid, table: table, proc_dir: @proc_dir)
            reports = Identity.reports(@dir)
            ruby = entries.select { |entry| reports.key?(entry.pid) || exe(entry.pid) == @expected.exe }
            ruby.reject { |entry| reports.key?(entry.pid) }
          end
          attach(ruby, reports, table)
        end

        def attach(entries, reports, table)
          unless reports.key?(@server.pid)
            raise IdentityMismatch.new("identity check failed: the server's main process (#{@server.pid}) reported " \
                                       "no identity (it did not start through rackbench's launcher)",
                                       record: nil)
          end
          entries.filter_map do |entry|
            report = reports[entry.pid]
            if report
              # The runner's own reading of the process's maps (Comparison
              # prefers it to the report's).
              next { pid: entry.pid, report: report, source: "reported",
                     maps_malloc: Maps.malloc(entry.pid, proc_dir: @proc_dir) }
            end

            silent(entry, reports, table)
          end
        end

        # A process of the variant's executable that wrote no report: a
        # program the server or the app exec'd (a helper), which is no server
        # process and is only recorded; or a fork that did not report, which
        # fails the check.
        def silent(entry, reports, table)
          if reporting_ancestor(entry, reports, table) && exec_child?(entry.pid)
            @others << { "pid" => entry.pid, "ppid" => entry.ppid, "command" => command(entry.pid) }
            return nil
          end

          raise IdentityMismatch.new("identity check failed: process #{entry.pid} runs #{@expected.exe} " \
                                     "but reported no identity", record: nil)
        end

        # /proc/PID/environ is the environment block a process was started
        # with. A fork's is a copy of its parent's; a program exec'd from a
        # server process gets one built from that process's ENV, into which
        # the agent put EXEC_MARK after it started (agent/identity.rb).
        def exec_child?(pid)
          environ = File.binread(File.join(@proc_dir, pid.to_s, "environ"))
          environ.split("\0").any? { |entry| entry.start_with?("#{EXEC_MARK}=") }
        rescue SystemCallError
          false
        end

        def command(pid)
          File.binread(File.join(@proc_dir, pid.to_s, "cmdline")).tr("\0", " ").strip[0, 200]
        rescue SystemCallError
          nil
        end

        def reporting_ancestor(entry, reports, table)
          seen = {}
          pid = entry.ppid
          while pid && !seen[pid]
            return pid if reports.key?(pid)

            seen[pid] = true
            pid = table[pid]&.ppid
          end
          nil
        end

        def exe(pid)
          ProcessTree.exe(pid, proc_dir: @proc_dir)
        end
      end
    end
  end
end
