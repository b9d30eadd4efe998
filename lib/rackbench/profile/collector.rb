# frozen_string_literal: true

require_relative "../agent_files"
require_relative "../process/pid_alive"

module Rackbench
  module Profile
    # The runner's side of a profiled trial, after the measured window:
    # waits for every server process's dump (agent/profile.rb writes
    # inside/<pid>.stackprof.dump, .vernier.json or .objspace.json at the
    # window's end, on a watcher thread that may wake late under load) and
    # merges them into the trial's profile.
    #
    # Which processes owe a dump: those that have an identity report
    # (identity/<pid>.json: a Ruby process of the server) and are still
    # alive. A process that died, or one forked after the window, owes
    # none; one that gives none by the deadline is listed as missing.
    class Collector
      # Generous: a process under the end of the load may take a while to
      # stop StackProf and write some megabytes.
      DEADLINE_S = 30.0
      POLL_INTERVAL_S = 0.05
      # Each profiler's dump, and how it is read.
      READERS = { ".stackprof.dump" => Dump, VernierDump::SUFFIX => VernierDump, ObjspaceDump::SUFFIX => ObjspaceDump }.freeze

      Outcome = Struct.new(:profile, :missing, keyword_init: true)

      # trial_dir :: the trial's directory (identity/ and inside/ below it)
      # :deadline_s :: how long to wait for the dumps (default: DEADLINE_S)
      # :alive :: called with a pid, whether that process still runs (default: signal 0)
      def initialize(trial_dir, deadline_s: DEADLINE_S, alive: PidAlive.method(:call))
        @identity_dir = File.join(trial_dir, "identity")
        @inside_dir = File.join(trial_dir, "inside")
        @deadline_s = deadline_s
        @alive = alive
      end

      # Waits, then merges. Returns an Outcome: profile (a Merged, nil when
      # no process gave a dump) and missing (Array of { "pid", "reason" }).
      # Raises Profile::Error for a dump that cannot be read.
      def collect
        owed = AgentFiles.wait(deadline_s: @deadline_s, poll_s: POLL_INTERVAL_S) { owing }
        dumps = dump_paths
        missing = owed.map { |pid| { "pid" => pid, "reason" => "no profile by #{format("%g", @deadline_s)} s after the window" } }
        profiles = dumps.sort.map { |path| READERS.find { |suffix, _| path.end_with?(suffix) }.last.read(path) }
        Outcome.new(profile: profiles.empty? ? nil : Merged.merge(profiles), missing: missing)
      end

      private

      # Processes with an identity report, alive, without a dump yet.
      def owing
        dumped = dump_paths.map { |path| File.basename(path).to_i }
        reporting_pids.reject { |pid| dumped.include?(pid) }.select { |pid| @alive.call(pid) }
      end

      def reporting_pids
        AgentFiles.by_pid(@identity_dir, ".json").keys
      end

      def dump_paths
        READERS.keys.flat_map { |suffix| Dir.glob(File.join(@inside_dir, "*#{suffix}")) }
      end
    end
  end
end
