# frozen_string_literal: true

module Rackbench
  class Runner
    # One line per finished trial with its result and an ETA for the whole
    # experiment. The ETA uses the mean wall time of the trials run so far
    # in this invocation: boots differ a lot between servers and rubies, so
    # the plan's fixed per-trial estimate is only announced up front.
    class Progress
      def initialize(out:, total:, already_done:)
        @out = out
        @total = total
        @done = already_done
        @walls = []
      end

      def starting(trial)
        @out.print format("[%*d/%d] %s batch %d ... ", @total.to_s.size, @done + 1, @total, trial.config, trial.batch)
        @out.flush
      end

      # summary: "ok 12345.6 req/s p99 1.2ms" or "FAILED: reason"
      def finished(summary, wall_s)
        @done += 1
        @walls << wall_s
        remaining = @total - @done
        per_trial = @walls.sum / @walls.size
        eta = remaining.zero? ? "done" : "ETA #{Plan.format_duration(remaining * per_trial)}"
        @out.puts "#{summary} (#{format("%.1f", wall_s)}s; #{eta})"
      end
    end
  end
end
