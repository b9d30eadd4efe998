# frozen_string_literal: true

module Rackbench
  module Instructions
    # The record's instructions document, read from callgrind's files in a
    # trial's instructions directory once the window has ended: each
    # process's count over the window (the dump the end edge asked for, or
    # the one a process wrote as it exited mid-window), summed, divided by
    # the responses of the window; and the functions that cost the most,
    # summed over the processes.
    #
    #   {"tool" => "callgrind", "valgrind" => "3.19.0", "requests" => 2000,
    #    "instructions" => 479_602_746, "per_request" => 239_801.4,
    #    "processes" => [{"pid", "role", "program", "instructions", "per_request"}, ...],
    #    "functions" => [{"object", "name", "instructions", "per_request"}, ...],
    #    "gc" => {"cycles" => {"minor", "major", "compactions"}, "instructions", "per_request", "named",
    #             "major_by", "processes" => [...]},
    #    "outside_gc_per_request" => 235_012.3, "quiet" => {"checks", "waits"},
    #    "call_graph" => {...} (CallGraph), "cache_sim" => {...} (Cycles, with --cache-sim=yes only)}
    #
    # Every server process's count is in the total; "processes" says how it
    # divides (doc/output.md), and the sum of theirs is the total. A program
    # that is no ruby and started during the window (Passenger's core runs
    # `ps` and `uname` every few seconds to collect its metrics) is a helper
    # of the server, whose runs follow the clock, not the requests: its
    # count is listed under "left_out" and is in no total.
    class Collection
      # The functions kept per trial: the report lists the top ones of a
      # configuration, merged over its batches.
      FUNCTIONS_KEPT = 60
      # "fn'2": callgrind's name for a recursion level of fn (the VM's
      # evaluation loop calls itself); one function for a report.
      RECURSION = /'\d+\z/
      # Code in memory no file backs ("???"), named by an address: what a
      # JIT wrote (YJIT's machine code). Each run puts it elsewhere and each
      # of its blocks is a "function" of its own: one entry for a report.
      JIT_CODE = "(JIT-compiled code)"
      UNKNOWN_OBJECT = "???"
      ADDRESS = /\A0x\h+\z/

      # :dir :: the trial's instructions directory (Valgrind#wrapper's)
      # :valgrind_version :: valgrind's version, kept with the counts
      def initialize(dir:, valgrind_version: nil)
        @dir = dir
        @valgrind_version = valgrind_version
      end

      # The document for a window of +requests+ responses. +identity+ is
      # the trial's identity record (its processes say which were forked
      # and which exec'd); +main_pid+ the server's main process;
      # +started_pids+ the processes switched on at the window's start
      # (nil: every process counts); +gc+ the GC cycles each Ruby process
      # ran inside the window (GcEdges#readings; nil: not known); +quiet+
      # the engine's gate's report. Raises Error when no process wrote a
      # count.
      # +gc_entries+ a stripped ruby's collector functions (GcProbe).
      def document(requests:, identity: nil, main_pid: nil, started_pids: nil, gc: nil, quiet: nil, gc_entries: nil)
        files = dumps
        raise Error, "callgrind wrote no counts in #{@dir}: no server process ran under valgrind" if files.empty?

        events = identity_events(identity)
        processes = files.group_by(&:pid).map do |pid, dumps|
          instructions = dumps.sum(&:total)
          { "pid" => pid, "role" => role(pid, events, main_pid), "program" => program(dumps.first.command),
            "instructions" => instructions, "per_request" => per(instructions, requests) }
        end
        left_out, counted = processes.partition { |p| helper?(p, started_pids) }
        counted_files = files.reject { |file| left_out.any? { |p| p["pid"] == file.pid } }
        total = counted.sum { |p| p["instructions"] }
        gc_doc = gc && GcFigure.new(readings: gc, files: counted_files, requests: requests, entries: gc_entries).to_h
        { "tool" => Valgrind::TOOL, "valgrind" => @valgrind_version, "requests" => requests, "instructions" => total,
          "per_request" => per(total, requests), "processes" => counted.sort_by { |p| p["pid"] },
          "left_out" => left_out.sort_by { |p| p["pid"] }, "functions" => functions(counted_files, requests),
          "gc" => gc_doc, "outside_gc_per_request" => outside_gc(total, gc_doc, requests), "quiet" => quiet }
          .merge(CallGraph.new(counted_files).fields, Cycles.fields(counted_files, requests))
      end

      private

      # A program that is no ruby of the server and was not running when
      # the window started.
      def helper?(process, started_pids)
        !started_pids.nil? && process["role"] == "program" && !started_pids.include?(process["pid"])
      end

      # Every dump of the directory with counts: callgrind.<pid>.<n> (asked
      # for at the end edge) and callgrind.<pid> (written at a process's
      # exit; empty for one still running).
      def dumps
        Dir.glob(File.join(@dir, "callgrind.*")).sort.filter_map do |path|
          next unless File.basename(path).match?(/\Acallgrind\.\d+(\.\d+)?\z/)

          file = CallgrindFile.read(path)
          file.empty? || file.pid.nil? ? nil : file
        end
      end

      # pid => "fork" or "exec", from the identity record's processes.
      def identity_events(identity)
        Array(identity.is_a?(Hash) ? identity["processes"] : nil).to_h { |p| [p["pid"], p["event"]] }
      end

      # "main" (the process the runner started), "worker" (forked through
      # Ruby), "exec" (a ruby another server process exec'd: Passenger's
      # preloader), "program" (no ruby: Passenger's core).
      def role(pid, events, main_pid)
        return "main" if pid == main_pid

        { "fork" => "worker", "exec" => "exec" }.fetch(events[pid], "program")
      end

      # What a command line runs, shortly: "ruby3.1 puma" for the launcher
      # running a gem's executable, "PassengerAgent core".
      def program(command)
        words = command.to_s.split
        return nil if words.empty?

        launcher = words.index { |w| w.end_with?("/launcher.rb") }
        second = launcher ? words[launcher + 1] : words[1..].find { |w| !w.start_with?("-") }
        [File.basename(words.first), second && File.basename(second)].compact.join(" ")
      end

      # The functions with the most instructions over the processes, their
      # recursion levels merged.
      def functions(files, requests)
        sums = Hash.new(0)
        files.each do |file|
          file.functions.each { |function, cost| sums[function_key(function)] += cost }
        end
        sums.sort_by { |_, cost| -cost }.first(FUNCTIONS_KEPT).map do |(object, name), cost|
          { "object" => object, "name" => name, "instructions" => cost, "per_request" => per(cost, requests) }
        end
      end

      # [object's file name, function name] as a report lists it.
      def function_key(function)
        object = File.basename(function.object.to_s)
        name = function.name.sub(RECURSION, "")
        object == UNKNOWN_OBJECT && name.match?(ADDRESS) ? [object, JIT_CODE] : [object, name]
      end

      # What the window's processes executed outside Ruby's GC, per request;
      # nil when the GC's share is not known.
      def outside_gc(total, gc_doc, requests)
        return nil unless gc_doc && gc_doc["instructions"]

        per(total - gc_doc["instructions"], requests)
      end

      def per(count, requests)
        requests.to_i.positive? ? count.fdiv(requests) : nil
      end
    end
  end
end
