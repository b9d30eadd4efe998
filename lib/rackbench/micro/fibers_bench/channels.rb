# frozen_string_literal: true

# Part of the standalone benchmark script fibers_bench.rb (Ruby 2.6, no gems).
module Rackbench
  module Micro
    module FibersBench
      # The pipes between the master and its workers: for each worker a
      # request pipe (master writes, worker reads) and a reply pipe (worker
      # writes, master reads).
      class Channels
        # One worker's four pipe ends.
        Channel = Struct.new(:request_reader, :request_writer, :reply_reader, :reply_writer) do
          def ios
            [request_reader, request_writer, reply_reader, reply_writer]
          end
        end

        # File descriptors a run needs beyond the pipes (stdio, the ruby's
        # own files; JRuby's JVM holds many).
        SPARE_FDS = 64

        include Enumerable

        # Opens 4 pipe ends per worker. Raises Mismatch when the process may
        # not open that many files and its limit cannot be raised.
        def self.open(workers)
          ensure_fd_limit!(4 * workers + SPARE_FDS)
          new(Array.new(workers) { Channel.new(*IO.pipe, *IO.pipe).tap { |c| sync(c) } })
        end

        # Raises the soft limit on open files up to the hard one if needed.
        def self.ensure_fd_limit!(needed)
          soft, hard = Process.getrlimit(:NOFILE)
          return if soft >= needed

          raise Mismatch, "needs #{needed} open files but the limit is #{hard} (ulimit -n)" if hard < needed

          Process.setrlimit(:NOFILE, needed, hard)
        rescue NotImplementedError, ArgumentError
          nil # this ruby cannot tell; opening the pipes will say
        end

        def self.sync(channel)
          channel.request_writer.sync = true
          channel.reply_writer.sync = true
        end
        private_class_method :sync

        def initialize(channels)
          @channels = channels
          @worker_of = {}
          channels.each_with_index { |channel, worker| @worker_of[channel.reply_reader] = worker }
        end

        def each(&block)
          @channels.each(&block)
        end

        def [](worker)
          @channels[worker]
        end

        def size
          @channels.size
        end

        # Every pipe end (for a forked worker to close the ones not its own).
        def ios
          @channels.flat_map(&:ios)
        end

        # The worker whose reply pipe is io.
        def worker_of(io)
          @worker_of.fetch(io)
        end

        # Closes whatever is still open. Safe to call twice.
        def close_all
          ios.each { |io| io.close unless io.closed? }
        end
      end

      # The master of the threads and processes modes, as in the seed
      # benchmark: one loop in the main thread that waits in IO.select for
      # any worker's reply, checks it and sends that worker its next
      # message. One message per worker is in flight at a time, so a worker
      # is busy or waiting on its pipe, never queued behind itself.
      module SelectMaster
        module_function

        # Sends every message of table to every worker and checks every
        # reply; returns the number of replies checked.
        def round(channels, table)
          messages = table.size
          next_seq = Array.new(channels.size, 0)
          active = channels.map(&:reply_reader)
          channels.each { |channel| channel.request_writer.write(table.message(0)) }
          checked = 0
          until active.empty?
            ready, = IO.select(active)
            ready.each do |io|
              worker = channels.worker_of(io)
              seq = next_seq[worker]
              table.check!(worker, seq, io.read(Protocol::REPLY_BYTES))
              checked += 1
              seq += 1
              next_seq[worker] = seq
              seq < messages ? channels[worker].request_writer.write(table.message(seq)) : active.delete(io)
            end
          end
          checked
        end
      end
    end
  end
end
