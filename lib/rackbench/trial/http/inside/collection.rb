# frozen_string_literal: true

require "json"
require_relative "../../../agent_files"

module Rackbench
  module Trial
    class Http < Kind
      module Inside
        # Collects the counts files of a server's processes after the
        # engine's window has ended (the runner marked inside/window.end),
        # waiting up to a deadline for every live process of the server's
        # tree that reported its identity (so runs the agent), and says
        # which processes gave none and why.
        class Collection
          # A process writes its counts as soon as its watcher sees the end
          # mark: within a poll interval, plus a GVL timeslice under load.
          # Generous for a machine busy with something else.
          DEADLINE_S = 10.0
          POLL_INTERVAL_S = 0.02

          # :server :: the ServerProcess (pid, pgid)
          # :trial_dir :: the trial's directory (counts in inside/, reports in identity/)
          # :identity :: the trial's identity record (its "exe" and "others")
          # :deadline_s :: see DEADLINE_S
          # :proc_dir :: where /proc is (tests use a fake tree)
          def initialize(server:, trial_dir:, identity:, deadline_s: DEADLINE_S, proc_dir: ProcessTree::PROC_DIR)
            @server = server
            @dir = WindowMarks.directory(trial_dir)
            @identity_dir = Identity.directory(trial_dir)
            @identity = identity || {}
            @deadline_s = deadline_s
            @proc_dir = proc_dir
          end

          # [counts, missing]: the processes' counts (Hashes as written,
          # valid ones only) and [{ "pid" =>, "reason" => }]. Waits while a
          # live process of the tree that reported its identity (so runs the
          # agent) has written no counts.
          def collect
            reports = alive = counts = unreadable = nil
            AgentFiles.wait(deadline_s: @deadline_s, poll_s: POLL_INTERVAL_S) do
              reports = Identity.reports(@identity_dir)
              alive = ProcessTree.entries(@server.pid, pgid: @server.pgid, proc_dir: @proc_dir)
              counts, unreadable = read_counts
              alive.select { |entry| reports.key?(entry.pid) && !counts.key?(entry.pid) }
            end
            [counts.values, missing(alive, reports, counts, unreadable)]
          end

          private

          # pid => counts, and the pids whose file is not counts.
          def read_counts
            counts = {}
            unreadable = []
            AgentFiles.by_pid(@dir, COUNTS_SUFFIX).each do |pid, path|
              data = begin
                JSON.parse(File.read(path))
              rescue JSON::ParserError, SystemCallError
                nil
              end
              Document.valid?(data) && data["pid"] == pid ? counts[pid] = data : unreadable << pid
            end
            [counts, unreadable]
          end

          def missing(alive, reports, counts, unreadable)
            others = Array(@identity["others"]).map { |o| o["pid"] }
            exe = @identity["exe"] # the real path, as the server's main process reported it
            silent = alive.reject { |entry| counts.key?(entry.pid) || others.include?(entry.pid) }.filter_map do |entry|
              reason = reason(entry.pid, reports, unreadable, exe)
              reason && { "pid" => entry.pid, "reason" => reason }
            end
            alive_pids = alive.map(&:pid)
            gone = reports.keys.reject { |pid| counts.key?(pid) || alive_pids.include?(pid) || others.include?(pid) }
            silent + gone.map { |pid| { "pid" => pid, "reason" => "exited before its counts were written" } }
          end

          # Why a live process of the tree gave no counts; nil for a process
          # that is no server process (another executable: a shell, the guard).
          def reason(pid, reports, unreadable, exe)
            return "its counts file is not the agent's counts" if unreadable.include?(pid)
            if reports.key?(pid)
              return format("no counts within %.1f s after the window ended", @deadline_s)
            end
            return nil unless exe && ProcessTree.exe(pid, proc_dir: @proc_dir) == exe

            "no identity report: forked outside Ruby (in C), so no agent runs in it"
          end
        end
      end
    end
  end
end
