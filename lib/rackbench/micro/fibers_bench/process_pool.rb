# frozen_string_literal: true

# Part of the standalone benchmark script fibers_bench.rb (Ruby 2.6, no gems).
module Rackbench
  module Micro
    module FibersBench
      # This ruby cannot run the mode (JRuby has no fork).
      class Unsupported < StandardError; end

      # Mode "processes": one forked process per worker, each blocking on
      # its request pipe; the master is SelectMaster in the parent. No GVL
      # is shared, so workers run in parallel on as many CPUs as they get.
      #
      # A worker must never outlive the master: each closes every pipe end
      # but its own two right after fork, so that when the master exits or
      # dies its request pipe has no writer left and the worker reads EOF
      # and exits. (A worker holding another worker's request pipe open
      # would keep that one waiting forever.)
      class ProcessPool
        STOP_TIMEOUT_S = 10
        KILL_GRACE_S = 2
        POLL_S = 0.005

        def self.unsupported_reason
          return nil if Process.respond_to?(:fork)

          "fork is not available on #{RUBY_ENGINE} #{RUBY_ENGINE == "ruby" ? RUBY_VERSION : RUBY_ENGINE_VERSION}"
        end

        def initialize(workers:, passes:)
          @workers = workers
          @passes = passes
          @pids = []
        end

        def start
          reason = self.class.unsupported_reason
          raise Unsupported, reason if reason

          @channels = Channels.open(@workers)
          all = @channels.ios
          @channels.each_with_index { |channel, worker| @pids << fork { serve(channel, all, worker) } }
          @channels.each do |channel|
            channel.request_reader.close
            channel.reply_writer.close
          end
        end

        def round(table)
          SelectMaster.round(@channels, table)
        end

        def worker_pids
          @pids.dup
        end

        def processes
          1 + @pids.size
        end

        # Closes the request pipes, so each worker reads EOF and exits, and
        # reaps them all; raises Mismatch for a worker that failed.
        def stop
          @channels.each { |channel| channel.request_writer.close }
          statuses = reap(@pids, STOP_TIMEOUT_S)
          failed = statuses.reject { |_, status| status&.success? }
          raise Mismatch, "worker process(es) failed: #{failed.map { |pid, st| "#{pid} #{describe(st)}" }.join(", ")}" unless failed.empty?
        ensure
          @channels&.close_all
          abort
        end

        # Cleanup after a failure: TERM, a grace period, KILL; every worker
        # reaped.
        def abort
          @channels&.close_all
          return if @pids.empty?

          signal("TERM", @pids)
          left = reap(@pids, KILL_GRACE_S).select { |_, status| status.nil? }.map(&:first)
          signal("KILL", left)
          reap(left, nil)
          @pids = []
        end

        private

        # The child: keeps only its own pipe ends, leaves the master's
        # stdout (where the result goes) to the master, serves, and exits
        # without running the master's at_exit handlers.
        def serve(channel, all, worker)
          $stdout.reopen(File::NULL)
          (all - [channel.request_reader, channel.reply_writer]).each(&:close)
          Protocol.serve_blocking(channel.request_reader, channel.reply_writer, @passes)
          exit!(0)
        rescue Exception => e # everything, SignalException included: a worker must end in exit!
          warn "worker #{worker} (pid #{Process.pid}): #{e.class}: #{e.message}"
          exit!(1)
        end

        # Waits for pids up to timeout_s (nil: for ever); returns
        # [[pid, Process::Status or nil when still running]], and forgets
        # the reaped ones.
        def reap(pids, timeout_s)
          deadline = timeout_s && Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
          statuses = pids.map { |pid| [pid, nil] }.to_h
          loop do
            statuses.each_key do |pid|
              statuses[pid] ||= wait(pid, timeout_s ? Process::WNOHANG : 0)
            end
            break if statuses.values.all?
            break if deadline && Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

            sleep POLL_S
          end
          @pids -= statuses.select { |_, status| status }.keys
          statuses.to_a
        end

        def wait(pid, flags)
          _, status = Process.wait2(pid, flags)
          status
        rescue Errno::ECHILD
          :gone
        end

        def signal(name, pids)
          pids.each do |pid|
            Process.kill(name, pid)
          rescue Errno::ESRCH
            nil
          end
        end

        def describe(status)
          return "did not exit" if status.nil?
          return "already reaped" unless status.respond_to?(:exitstatus)

          status.signaled? ? "killed by signal #{status.termsig}" : "exited with status #{status.exitstatus}"
        end
      end
    end
  end
end
