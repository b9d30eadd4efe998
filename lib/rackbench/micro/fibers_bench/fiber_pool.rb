# frozen_string_literal: true

# Part of the standalone benchmark script fibers_bench.rb (Ruby 2.6, no gems).
module Rackbench
  module Micro
    module FibersBench
      # Mode "fibers": one Fiber per worker and, for each round, one master
      # Fiber per worker, all on one Reactor in the main thread. The seed
      # benchmark first drove fiber workers from a master in another thread
      # and found it twice as slow as this: mixing threads into a fiber
      # benchmark measures the threads. Here no thread is involved at all.
      class FiberPool
        def initialize(workers:, passes:)
          @workers = workers
          @passes = passes
          @alive = 0
        end

        def start
          @channels = Channels.open(@workers)
          @reactor = Reactor.new
          @channels.each { |channel| @reactor.spawn { serve(channel) } }
        end

        # Spawns one master fiber per worker, each sending its messages in
        # order and checking each reply, and runs the reactor until all are
        # done.
        def round(table)
          pending = @channels.size
          checked = 0
          @channels.each_with_index do |channel, worker|
            @reactor.spawn do
              table.size.times do |seq|
                @reactor.write_all(channel.request_writer, table.message(seq))
                table.check!(worker, seq, @reactor.read_exactly(channel.reply_reader, Protocol::REPLY_BYTES))
                checked += 1
              end
              pending -= 1
            end
          end
          @reactor.run_while { pending.positive? }
          checked
        end

        def worker_pids
          []
        end

        def processes
          1
        end

        # Closes the request pipes and runs the reactor until every worker
        # fiber has read EOF and ended.
        def stop
          @channels.each { |channel| channel.request_writer.close }
          @reactor.run_while { @alive.positive? }
        ensure
          @channels&.close_all
        end

        def abort
          @channels&.close_all
        end

        private

        def serve(channel)
          @alive += 1
          while (frame = @reactor.read_exactly(channel.request_reader, Protocol::MESSAGE_BYTES))
            @reactor.write_all(channel.reply_writer, Protocol.reply(frame, @passes))
          end
          channel.reply_writer.close
          @alive -= 1
        end
      end
    end
  end
end
