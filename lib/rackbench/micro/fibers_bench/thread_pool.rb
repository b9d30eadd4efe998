# frozen_string_literal: true

# Part of the standalone benchmark script fibers_bench.rb (Ruby 2.6, no gems).
module Rackbench
  module Micro
    module FibersBench
      # Mode "threads": one Thread per worker, each blocking on its request
      # pipe; the master is SelectMaster in the main thread. Under CRuby's
      # GVL only one of them runs Ruby at a time, but a thread blocked in
      # read(2) does not hold the lock.
      class ThreadPool
        # How long stop waits for the workers to see EOF and end.
        STOP_TIMEOUT_S = 10

        def initialize(workers:, passes:)
          @workers = workers
          @passes = passes
          @threads = []
        end

        def start
          @channels = Channels.open(@workers)
          @threads = @channels.map do |channel|
            Thread.new do
              Thread.current.report_on_exception = false
              Protocol.serve_blocking(channel.request_reader, channel.reply_writer, @passes)
            end
          end
        end

        def round(table)
          SelectMaster.round(@channels, table)
        end

        # Threads share the master's process.
        def worker_pids
          []
        end

        def processes
          1
        end

        # Closes the request pipes (EOF for every worker) and joins the
        # threads; raises Mismatch when one failed or does not end.
        def stop
          @channels.each { |channel| channel.request_writer.close }
          deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + STOP_TIMEOUT_S
          @threads.each_with_index do |thread, worker|
            left = [deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC), 0].max
            raise Mismatch, "worker thread #{worker} did not end after its pipe closed" unless thread.join(left)
          end
          @threads = []
        rescue Mismatch
          raise
        rescue StandardError => e
          raise Mismatch, "a worker thread failed: #{e.class}: #{e.message}"
        ensure
          @channels&.close_all
        end

        # Cleanup after a failure: closing the pipes wakes every blocked
        # thread with EOF or IOError; the rest are killed.
        def abort
          @channels&.close_all
          @threads.each { |thread| thread.kill.join(1) }
          @threads = []
        end
      end
    end
  end
end
