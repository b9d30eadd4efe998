# frozen_string_literal: true

require_relative "../monotonic_clock"

module Rackbench
  class Runner
    # A progress bar and one line per finished trial with its result and an
    # ETA for the whole experiment. On a terminal the current trial's line
    # is redrawn twice a second with its elapsed time; elsewhere (CI logs,
    # pipes) each trial prints once, so logs stay clean.
    #
    # The ETA uses the mean wall time of the trials run so far in this
    # invocation: boots differ a lot between servers and rubies, so the
    # plan's fixed per-trial estimate is only used before the first trial ends.
    class Progress
      include MonotonicClock

      BAR_CELLS = 20
      TICK_S = 0.5

      # :out :: where to write
      # :total :: trials in the plan
      # :already_done :: trials stored by earlier runs
      # :estimated_trial_s :: the plan's estimate of one trial (default: nil)
      # :live :: redraw the current line (default: out is a TTY)
      def initialize(out:, total:, already_done:, estimated_trial_s: nil, live: nil)
        @out = out
        @total = total
        @done = already_done
        @walls = []
        @estimated_trial_s = estimated_trial_s
        @live = live.nil? ? (out.respond_to?(:tty?) && out.tty?) : live
        @lock = Mutex.new
      end

      def starting(trial)
        @prefix = format("%s %*d/%d %s batch %d", bar, @total.to_s.size, @done + 1, @total, trial.config, trial.batch)
        @started = now
        return start_ticker if @live

        @out.print "#{@prefix} ... "
        @out.flush
      end

      # summary: "ok 12345.6 req/s p99 1.2ms" or "FAILED: reason"
      def finished(summary, wall_s)
        stop_ticker
        @done += 1
        @walls << wall_s
        remaining = @total - @done
        eta = remaining.zero? ? "done" : "ETA #{Experiment::Plan.format_duration(remaining * per_trial_s)}"
        line = "#{summary} (#{format("%.1f", wall_s)}s; #{eta})"
        @live ? @out.puts("\r\e[K#{@prefix} ... #{line}") : @out.puts(line)
      end

      # Stops redrawing (Ctrl-C or an error in the middle of a trial).
      def abort
        stop_ticker
      end

      private

      # [████████░░░░░░░░░░░░]: trials done out of the plan.
      def bar
        filled = @total.zero? ? BAR_CELLS : (@done * BAR_CELLS / @total)
        "[#{"█" * filled}#{"░" * (BAR_CELLS - filled)}]"
      end

      def per_trial_s
        return @walls.sum / @walls.size unless @walls.empty?

        @estimated_trial_s || 0
      end

      def start_ticker
        draw
        @ticker = Thread.new do
          loop do
            sleep TICK_S
            draw
          end
        end
      end

      # True when a ticker was running.
      def stop_ticker
        ticker = @ticker
        @ticker = nil
        return false unless ticker

        ticker.kill
        ticker.join
        true
      end

      def draw
        elapsed = now - @started
        left = [(@total - @done) * per_trial_s - elapsed, 0].max
        eta = per_trial_s.positive? ? "; ETA #{Experiment::Plan.format_duration(left)}" : ""
        @lock.synchronize do
          @out.print "\r\e[K#{@prefix} ... #{format("%.0f", elapsed)}s#{eta}"
          @out.flush
        end
      end
    end
  end
end
