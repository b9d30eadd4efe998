# frozen_string_literal: true

# Part of the standalone benchmark script fibers_bench.rb: plain Ruby 2.6
# (JRuby 9.3), no gems, nothing from the rest of rackbench.
module Rackbench
  module Micro
    module FibersBench
      # A worker answered something other than the reply its message calls
      # for, or hung up early: the run is invalid, whatever its speed.
      class Mismatch < StandardError; end

      # The frames exchanged over the pipes and the work a worker does for
      # each. Frames have a fixed size, so a reader knows when one is whole
      # without parsing, and each is written in one write(2) smaller than
      # PIPE_BUF (4096), which the kernel delivers in one piece.
      #
      # message :: MESSAGE_BYTES: the sequence number (10 digits), a space,
      #            a fixed filler, "\n"
      # reply :: REPLY_BYTES: the message's sequence number, a space, the
      #          checksum (10 digits), spaces, "\n"
      #
      # The work is a 32-bit FNV-1a hash over the message's bytes, repeated
      # +passes+ times: a few microseconds of pure Ruby per message, so the
      # benchmark is dominated by I/O and switching (the question it asks)
      # while a worker still cannot answer without reading every byte.
      module Protocol
        MESSAGE_BYTES = 64
        REPLY_BYTES = 32
        SEQ_DIGITS = 10
        FILL = ("rackbench-micro-fibers " * 3)[0, MESSAGE_BYTES - SEQ_DIGITS - 2]
        FNV_OFFSET = 2_166_136_261
        FNV_PRIME = 16_777_619
        MASK_32 = 0xffff_ffff

        module_function

        # The message with sequence number seq (0-based), a binary String.
        def message(seq)
          "#{format("%0#{SEQ_DIGITS}d", seq)} #{FILL}\n".b
        end

        # The reply a worker owes for frame (a message).
        def reply(frame, passes)
          format("%s %010d", frame[0, SEQ_DIGITS], checksum(frame, passes)).ljust(REPLY_BYTES - 1).concat("\n").b
        end

        # FNV-1a over frame's bytes, passes times, each pass starting from
        # the previous hash.
        def checksum(frame, passes)
          hash = FNV_OFFSET
          passes.times do
            frame.each_byte { |byte| hash = ((hash ^ byte) * FNV_PRIME) & MASK_32 }
          end
          hash
        end

        # The worker's side for threads and processes: blocking reads of one
        # message, one reply each, until the master closes the request pipe
        # (EOF), then the reply pipe is closed. A blocking read releases the
        # GVL, so other threads run while this one waits.
        def serve_blocking(input, output, passes)
          while (frame = input.read(MESSAGE_BYTES))
            raise Mismatch, "truncated message (#{frame.bytesize} bytes)" unless frame.bytesize == MESSAGE_BYTES

            output.write(reply(frame, passes))
          end
        ensure
          output.close unless output.closed?
        end
      end

      # Every message of a round and the reply it must get, computed once
      # before the workers start, so that checking a reply during the
      # measured round is one 32-byte comparison. Every worker receives the
      # same M messages; the sequence number in each makes every reply of a
      # worker distinct, so none can be cached.
      class Table
        attr_reader :size

        def initialize(messages, passes)
          @size = messages
          @messages = Array.new(messages) { |seq| Protocol.message(seq).freeze }.freeze
          @replies = @messages.map { |frame| Protocol.reply(frame, passes).freeze }.freeze
        end

        def message(seq)
          @messages[seq]
        end

        # Raises Mismatch unless reply is exactly the answer to message seq
        # from worker (nil: the worker closed its pipe).
        def check!(worker, seq, reply)
          return if reply == @replies[seq]
          raise Mismatch, "worker #{worker} closed its reply pipe after #{seq} replies" if reply.nil?

          raise Mismatch, "worker #{worker}: reply to message #{seq} is #{reply.inspect}, " \
                          "expected #{@replies[seq].inspect}"
        end
      end
    end
  end
end
