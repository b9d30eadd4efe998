# frozen_string_literal: true

require_relative "../../monotonic_clock"

module Rackbench
  class ServerProcess
    # Stops one server's process tree: TERM to the process group and to
    # every process of the tree outside it (workers may run in groups of
    # their own), a grace period, then KILL to whatever is left.
    #
    # Every process it meets is remembered by PID and start time: one whose
    # parent died is reparented away from the tree but is still found and
    # signalled, and a PID reused meanwhile by an unrelated process is
    # never signalled. Nobody gets the same signal twice, since servers may
    # read a second TERM as "exit now, skip the clean shutdown".
    class TreeStopper
      include MonotonicClock

      POLL_INTERVAL_S = 0.02

      # root_pid :: the server's main process, which leads group pgid
      # reaped :: a callable that reaps root_pid without blocking and
      #           returns true once it has been reaped (by anyone)
      def initialize(root_pid, pgid:, reaped:)
        @root_pid = root_pid
        @pgid = pgid
        @reaped = reaped
        @known = {}     # process key => ProcessTree::Entry
        @signalled = {} # process key => true, for TERM
      end

      # TERM, then up to grace_s for everything to exit, then KILL and up to
      # kill_wait_s more. Returns true when KILL was needed; raises
      # SetupError naming the processes that survived KILL.
      def stop(grace_s:, kill_wait_s:)
        signal_new("TERM", @signalled, group: true)
        return false if wait_gone(grace_s) { signal_new("TERM", @signalled, group: false) }

        killed = {}
        signal_new("KILL", killed, group: true)
        return true if wait_gone(kill_wait_s) { signal_new("KILL", killed, group: false) }

        raise SetupError, "could not stop the server: processes #{alive_pids.join(", ")} survived KILL"
      end

      private

      # Sends signal to every remembered process not in signalled: with
      # group, first to the whole process group at once, after which only
      # the processes outside it are signalled one by one.
      def signal_new(signal, signalled, group:)
        remember
        send_signal(signal, -@pgid) if group
        @known.each_value do |entry|
          next if signalled.key?(entry.key)

          # The group is read after the group signal went out: a process may
          # have left it since it was remembered (setsid), and one still in
          # it now was in it then and has had the signal.
          current = current_entry(entry)
          next unless current

          send_signal(signal, entry.pid) unless group && current.pgrp == @pgid
          signalled[entry.key] = true
        end
      end

      # Waits up to timeout_s until the root is reaped and no remembered
      # process is left, calling the block on every round (to remember, and
      # signal, processes that appeared meanwhile, such as a worker a master
      # replaced). Returns true when everything is gone.
      def wait_gone(timeout_s)
        deadline = now + timeout_s
        loop do
          root_reaped = @reaped.call
          yield
          return true if root_reaped && alive_pids.empty?
          return false if now >= deadline

          sleep POLL_INTERVAL_S
        end
      end

      def remember
        ProcessTree.entries(@root_pid, pgid: @pgid).each { |entry| @known[entry.key] ||= entry }
      end

      def alive_pids
        @known.each_value.select { |entry| current_entry(entry) }.map(&:pid)
      end

      # The process's Entry as of now if the same process (PID and start
      # time) still runs and is no zombie, else nil.
      def current_entry(entry)
        current = ProcessTree.read(entry.pid)
        current if current && current.start_ticks == entry.start_ticks && !current.zombie?
      end

      def send_signal(signal, target)
        Process.kill(signal, target)
      rescue Errno::ESRCH, Errno::EPERM
        nil # already gone (EPERM: the PID now belongs to someone else)
      end
    end
  end
end
