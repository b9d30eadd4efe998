#!/usr/bin/env ruby
# frozen_string_literal: true

# The threads / processes / fibers master-worker benchmark (doc/micro.md).
#
#   ruby fibers_bench.rb --mode fibers --workers 10 --messages 1000 [--warmup 1] [--work 1]
#
# A master sets up W workers, each connected to it by a request pipe and a
# reply pipe, sends every worker M fixed-size messages one at a time, and
# checks every reply. Workers are threads, forked processes, or fibers on a
# small IO.select reactor. Prints one JSON object on stdout; exit status 0
# when measured, 1 when the run failed (a wrong or missing reply, a worker
# that died), 2 for bad arguments, 3 when this ruby cannot run the mode (no
# fork on JRuby), with the JSON saying why in the last two.
#
# Standalone on purpose: plain Ruby 2.6 (JRuby 9.3), no gems, nothing from
# the rest of rackbench, no Fiber.scheduler, so that it runs unchanged
# under every ruby an experiment names.

require "json"
require "optparse"
require_relative "fibers_bench/protocol"
require_relative "fibers_bench/reactor"
require_relative "fibers_bench/channels"
require_relative "fibers_bench/thread_pool"
require_relative "fibers_bench/process_pool"
require_relative "fibers_bench/fiber_pool"
require_relative "fibers_bench/memory"

module Rackbench
  module Micro
    # See the top of this file.
    module FibersBench
      FORMAT = "rackbench-micro-fibers"
      FORMAT_VERSION = 1
      POOLS = { "threads" => ThreadPool, "processes" => ProcessPool, "fibers" => FiberPool }.freeze
      MODES = POOLS.keys.freeze
      EXIT_OK = 0
      EXIT_FAILED = 1
      EXIT_USAGE = 2
      EXIT_UNSUPPORTED = 3
      MEASURED = "the last round only: from the first message sent to the last reply checked; " \
                 "workers' setup, warmup rounds and teardown are timed apart"

      class UsageError < StandardError; end

      # mode :: threads, processes or fibers
      # workers :: W, the number of workers
      # messages :: M, messages per worker and round
      # warmup :: untimed rounds before the measured one
      # work :: passes of the checksum over each message (0: pure I/O)
      Options = Struct.new(:mode, :workers, :messages, :warmup, :work)

      module_function

      # Runs the command line; returns the exit status.
      def main(argv, out: $stdout, err: $stderr)
        options = parse(argv)
        result = run(options)
        out.puts JSON.generate(result)
        result["status"] == "ok" ? EXIT_OK : EXIT_FAILED
      rescue UsageError, OptionParser::ParseError => e
        err.puts "fibers_bench: #{e.message}"
        EXIT_USAGE
      rescue Unsupported => e
        out.puts JSON.generate(header(options).merge("status" => "unsupported", "reason" => e.message))
        EXIT_UNSUPPORTED
      rescue StandardError => e
        # A bug, not a measurement: still one document, and the backtrace
        # for whoever reads the log.
        err.puts e.full_message
        out.puts JSON.generate(header(options).merge("status" => "failed", "reason" => "#{e.class}: #{e.message}"))
        EXIT_FAILED
      end

      # Options from argv; raises UsageError naming the bad one.
      def parse(argv)
        options = Options.new(nil, 1, 1000, 1, 1)
        OptionParser.new do |p|
          p.on("--mode MODE", MODES) { |v| options.mode = v }
          p.on("--workers N", Integer) { |v| options.workers = v }
          p.on("--messages N", Integer) { |v| options.messages = v }
          p.on("--warmup N", Integer) { |v| options.warmup = v }
          p.on("--work N", Integer) { |v| options.work = v }
        end.parse!(argv.dup)
        raise UsageError, "--mode is required (#{MODES.join(", ")})" unless options.mode
        raise UsageError, "--workers must be at least 1, got #{options.workers}" if options.workers < 1
        raise UsageError, "--messages must be at least 1, got #{options.messages}" if options.messages < 1
        raise UsageError, "--warmup must be at least 0, got #{options.warmup}" if options.warmup.negative?
        raise UsageError, "--work must be at least 0, got #{options.work}" if options.work.negative?

        options
      end

      # Runs the benchmark; returns the result document (a Hash with String
      # keys). A wrong reply or a failed worker gives status "failed" with
      # the reason; Unsupported propagates.
      def run(options)
        times = {}
        started = now
        table = Table.new(options.messages, options.work)
        times["prepare_s"] = now - started
        measure(options, table, times)
      rescue Mismatch, SystemCallError, IOError, ThreadError => e
        header(options).merge("status" => "failed", "reason" => "#{e.class.name.split("::").last}: #{e.message}")
      end

      # Setup, warmup, the measured round, then teardown, each timed apart.
      # The pool is always cleaned up, so no worker outlives this method.
      def measure(options, table, times)
        pool = POOLS.fetch(options.mode).new(workers: options.workers, passes: options.work)
        begin
          times["setup_s"] = timed { pool.start }
          times["warmup_s"] = timed { options.warmup.times { pool.round(table) } }
          # Garbage of setup and warmup is collected now rather than in
          # the middle of the measured round.
          GC.start
          gc_before = GC.count
          measured_s = nil
          checked = nil
          measured_s = timed { checked = pool.round(table) }
          gc_runs = GC.count - gc_before
          memory = Memory.peaks(pool.worker_pids)
          processes = pool.processes
          times["teardown_s"] = timed { pool.stop }
        ensure
          pool.abort
        end
        expected = options.workers * options.messages
        raise Mismatch, "#{checked} replies checked, expected #{expected}" unless checked == expected

        result(options, times, measured_s, expected, gc_runs, memory, processes)
      end

      def result(options, times, measured_s, total, gc_runs, memory, processes)
        header(options).merge(
          "status" => "ok", "reason" => nil, "measured" => MEASURED,
          "messages" => total, "replies_checked" => total,
          "measured_s" => measured_s, "messages_per_s" => total / measured_s,
          "round_trip_us" => measured_s / options.messages * 1e6,
          "prepare_s" => times["prepare_s"], "setup_s" => times["setup_s"], "warmup_s" => times["warmup_s"],
          "teardown_s" => times["teardown_s"], "gc_runs" => gc_runs, "processes" => processes,
          "rss_peak_bytes" => memory[:total], "rss_peak_master_bytes" => memory[:master],
          "rss_peak_workers_bytes" => memory[:workers], "pss_end_bytes" => memory[:pss_total]
        )
      end

      # What every document starts with, also for a failure.
      def header(options)
        options ||= Options.new
        {
          "format" => FORMAT, "format_version" => FORMAT_VERSION,
          "mode" => options.mode, "workers" => options.workers, "messages_per_worker" => options.messages,
          "warmup_rounds" => options.warmup, "work_passes" => options.work,
          "message_bytes" => Protocol::MESSAGE_BYTES, "reply_bytes" => Protocol::REPLY_BYTES,
          "ruby_engine" => RUBY_ENGINE, "ruby_version" => RUBY_VERSION, "ruby_description" => RUBY_DESCRIPTION,
          "pid" => Process.pid
        }
      end

      def timed
        started = now
        yield
        now - started
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end
    end
  end
end

exit(Rackbench::Micro::FibersBench.main(ARGV)) if $PROGRAM_NAME == __FILE__
