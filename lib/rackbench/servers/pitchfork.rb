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
    #   pitchfork -c WORK_DIR/pitchfork.conf.rb -E production CONFIG_RU
    #   (the config sets worker_processes P and listen "127.0.0.1:PORT")
    class Pitchfork < Unicorn
      CONFIG_FILE = "pitchfork.conf.rb"
      WORKER_READY = /worker=\d+ gen=\d+ pid=\d+ ready/

      def name = "pitchfork"

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
    end

    register :pitchfork, Pitchfork.new
  end
end
