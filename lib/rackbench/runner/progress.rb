# frozen_string_literal: true

require_relative "../monotonic_clock"

module Rackbench
  class Runner
    # A progress bar and one line per finished trial with its result and an
    # ETA for the whole experiment. On a terminal the current trial's line
    # is redrawn twice a second with its elapsed time; elsewhere (CI logs,
    # pipes) each trial prints once, so logs stay clean.
    #
    # The ETA is the caller's Estimate::Guess of the trials left (learnt from
    # the boots and stops measured so far); when it is a guess, the line says
    # what it rests on: "ETA ~2m 10s, guessed from other configurations'
    # boot and stop".
    class Progress
      include MonotonicClock

      BAR_CELLS = 20
      TICK_S = 0.5

      # :out :: where to write
      # :total :: trials in the plan
      # :already_done :: trials stored by earlier runs
      # :live :: redraw the current line (default: out is a TTY)
      def initialize(out:, total:, already_done:, live: nil)
        @out = out
        @total = total
        @done = already_done
        @live = live.nil? ? (out.respond_to?(:tty?) && out.tty?) : live
        @lock = Mutex.new
      end

      # Trials in the plan that will run: fewer once a stopping rule
      # (--detect) has decided to leave later batches unrun.
      attr_writer :total

      # trial :: the Plan::Trial starting; eta :: an Estimate::Guess of it
      # and every trial after it (default: nil: no ETA shown)
      def starting(trial, eta: nil)
        @prefix = format("%s %*d/%d %s batch %d", bar, @total.to_s.size, @done + 1, @total, trial.config, trial.batch)
        @prefix += " (profiled)" if trial.respond_to?(:profiled?) && trial.profiled?
        @prefix += " (instructions)" if trial.respond_to?(:instructions?) && trial.instructions?
        @started = now
        @eta = eta
        return start_ticker if @live

        @out.print "#{@prefix} ... "
        @out.flush
      end

      # summary :: "ok 12345.6 req/s p99 1.2ms" or "FAILED: reason"
      # eta :: an Estimate::Guess of the trials left (default: nil: none shown)
      def finished(summary, wall_s, eta: nil)
        stop_ticker
        @done += 1
        remaining = @total - @done
        left = if remaining.zero? then "; done"
               elsif eta then "; #{eta_text(eta, eta.seconds)}"
               end
        line = "#{summary} (#{format("%.1f", wall_s)}s#{left})"
        @live ? @out.puts("\r\e[K#{@prefix} ... #{line}") : @out.puts(line)
      end

      # Stops redrawing (Ctrl-C or an error in the middle of a trial).
      def abort
        stop_ticker
      end

      private

      # "ETA 1m 20s", or "ETA ~1m 20s, guessed: ..." for a guess.
      def eta_text(eta, seconds)
        duration = Experiment::Plan.format_duration(seconds)
        eta.guess? ? "ETA ~#{duration}, #{eta.note}" : "ETA #{duration}"
      end

      # [████████░░░░░░░░░░░░]: trials done out of the plan.
      def bar
        filled = @total.zero? ? BAR_CELLS : (@done * BAR_CELLS / @total)
        "[#{"█" * filled}#{"░" * (BAR_CELLS - filled)}]"
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
        eta = @eta ? "; #{eta_text(@eta, [@eta.seconds - elapsed, 0].max)}" : ""
        @lock.synchronize do
          @out.print "\r\e[K#{@prefix} ... #{format("%.0f", elapsed)}s#{eta}"
          @out.flush
        end
      end
    end
  end
end
