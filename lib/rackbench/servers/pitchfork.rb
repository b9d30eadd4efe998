# frozen_string_literal: true

require_relative "../servers"
require_relative "unicorn"

module Rackbench
  module Servers
    # Pitchfork: Unicorn's descendant. A monitor process, a "mold" (the
    # process workers are forked from, so they share its warmed-up pages)
    # and N single-threaded workers. Workers and the mold run in process
    # groups of their own, which is why stopping walks the process tree and
    # not only the group.
    #
    # Pitchfork has no preload_app: the mold always loads the app once and
    # the workers are forked from it. Its own knob is reforking
    # (refork_after): a worker that has served enough requests becomes the
    # new mold, so the next workers start from its warmed-up memory.
    #
    #   pitchfork -c WORK_DIR/pitchfork.conf.rb -E ENV CONFIG_RU
    #   (the config sets worker_processes P, listen "127.0.0.1:PORT" and
    #   the trial's options)
    class Pitchfork < Unicorn
      CONFIG_FILE = "pitchfork.conf.rb"
      WORKER_READY = /worker=\d+ gen=\d+ pid=\d+ ready/

      OPTIONS = ServerOptions::Schema.new(
        Option.new(key: "timeout", type: ServerOptions.integer(min: 3), default: "20 (+ 2 s cleanup)",
                   effect: "seconds a worker may spend on one request before the monitor stops it " \
                           "(Pitchfork adds 2 s of cleanup before KILL)",
                   reaches: "`timeout N` (config)"),
        Option.new(key: "refork_after", type: ServerOptions.integer_list(min: 1), default: "off (no reforking)",
                   effect: "requests a worker serves before it becomes the new mold, per generation " \
                           "(the last count repeats), e.g. [50, 100, 1000]",
                   reaches: "`refork_after [N, ...]` (config)"),
        BACKLOG,
        CHECK_CLIENT_CONNECTION,
        ServerOptions.gc_compact_before_fork(
          hook: "`before_fork` (config) runs GC.compact once in each mold, before it forks its first worker " \
                "(a mold promoted by refork_after compacts its own heap)"
        )
      )

      def name = "pitchfork"

      def server_gem = "pitchfork"

      def option_schema = OPTIONS

      def gem_lines(_ruby_engine)
        ['gem "pitchfork"']
      end

      def supports
        "processes >= 1 (monitor + mold + N workers), threads 1; CRuby only"
      end

      # Monitor, mold and workers (pitchfork 0.18 keeps a mold even when
      # reforking is off).
      def worker_processes(processes)
        processes + 2
      end

      private

      # Pitchfork calls before_fork with the server only, in the mold
      # before each worker's fork (and in a worker before it forks a new
      # mold: the pid guard compacts each process once).
      def compact_hook
        <<~RUBY.chomp
          rackbench_compacted_pid = nil
          before_fork do |_server|
            unless rackbench_compacted_pid == Process.pid
              GC.compact
              rackbench_compacted_pid = Process.pid
            end
          end
        RUBY
      end
    end

    register :pitchfork, Pitchfork.new
  end
end
