# frozen_string_literal: true

# Part of the standalone benchmark script fibers_bench.rb: plain Ruby 2.6
# (JRuby 9.3), no gems, no Fiber.scheduler (Ruby 3.0+).
module Rackbench
  module Micro
    module FibersBench
      # A minimal fiber reactor: fibers do non-blocking reads and writes;
      # one that would block registers the IO it waits for and yields to
      # the reactor, which waits in IO.select for any registered IO to be
      # ready and resumes its fiber. Everything runs in one thread, so
      # nothing here needs a lock.
      #
      # Each IO has at most one waiting fiber (a pipe end belongs to one
      # side of one worker), which keeps the bookkeeping to two Hashes.
      #
      # Only the reactor resumes fibers, so it knows which one runs: it
      # tracks that itself rather than asking Fiber.current, which needs
      # require "fiber" before Ruby 3.1 and which JRuby 9.3 sometimes gets
      # wrong once its JIT compiles the caller (the fiber it names then
      # fails in Fiber.yield with "yield occurred with null previous fiber").
      class Reactor
        def initialize
          @readers = {}
          @writers = {}
          @current = nil
        end

        # Creates a fiber running the block and runs it until it first
        # waits (or ends). Returns the Fiber. Called from the main fiber.
        def spawn(&block)
          fiber = Fiber.new(&block)
          resume(fiber)
          fiber
        end

        # Resumes waiting fibers as their IOs become ready while the block
        # returns true. Raises when nothing waits but the block still wants
        # to go on: that would be a fiber that forgot to wait, which would
        # otherwise hang forever.
        def run_while
          while yield
            raise Mismatch, "reactor stalled: no fiber waits for I/O" if @readers.empty? && @writers.empty?

            readable, writable = IO.select(@readers.keys, @writers.keys)
            readable.each { |io| resume(@readers.delete(io)) }
            writable.each { |io| resume(@writers.delete(io)) }
          end
        end

        # Reads exactly bytes from io, yielding while the pipe is empty.
        # Returns nil at EOF before the first byte; raises Mismatch at EOF
        # in the middle of a frame.
        def read_exactly(io, bytes)
          buffer = nil
          loop do
            chunk = io.read_nonblock(bytes - (buffer ? buffer.bytesize : 0), exception: false)
            if chunk == :wait_readable
              wait(@readers, io)
            elsif chunk.nil?
              return nil if buffer.nil?

              raise Mismatch, "pipe closed in the middle of a frame (#{buffer.bytesize} of #{bytes} bytes)"
            elsif buffer
              buffer << chunk
            else
              buffer = chunk
            end
            return buffer if buffer && buffer.bytesize == bytes
          end
        end

        # Writes all of data to io, yielding while the pipe is full.
        def write_all(io, data)
          written = 0
          while written < data.bytesize
            rest = written.zero? ? data : data.byteslice(written, data.bytesize - written)
            count = io.write_nonblock(rest, exception: false)
            count == :wait_writable ? wait(@writers, io) : written += count
          end
          written
        end

        private

        def wait(table, io)
          table[io] = @current
          Fiber.yield
        end

        def resume(fiber)
          return unless fiber

          @current = fiber
          fiber.resume
        ensure
          @current = nil
        end
      end
    end
  end
end
