# frozen_string_literal: true

module Rackbench
  module Tune
    # Where more threads stop helping, at one process count: the fewest
    # threads whose score is as good as the best's at that process count,
    # "as good" meaning within knee_tolerance (5% by default) of the best
    # and, when the best has an interval (5 batches or more), at or above
    # its lower end too (a difference the batches cannot tell apart): the
    # stricter of the two. Why both: a narrow interval says the batches
    # can tell a 3% loss apart, so the knee must not give it away; a wide
    # one (a noisy candidate, a batch that missed the target) says nothing
    # about a much lower score being as good.
    #
    # Why this and not the best itself: threads past the knee cost memory
    # (a stack and live objects each) and GVL contention for no gain the
    # measurement can show; the knee is the cheapest configuration that
    # the data cannot distinguish from the best. The step-by-step gains
    # (score at each thread count over the previous) are kept beside it,
    # so a reader sees how steep the curve was before the knee.
    module Knee
      module_function

      # +scored+ :: [[threads, Scorer::Score], ...] of one server at
      #             +processes+, any order (nil scores are left out)
      # :tolerance :: see Settings#knee_tolerance
      # :left_out :: thread counts at +processes+ that did not run because
      #              their predicted memory exceeded the budget (default: [])
      # Returns a Hash (the tune document's "knees" entry) or nil when no
      # thread count held the target.
      def of(processes, scored, tolerance:, left_out: [])
        scored = scored.reject { |_, score| score.nil? }.sort_by(&:first)
        held = scored.select { |_, score| score.qualified }
        return nil if held.empty?

        best_threads, best = held.max_by { |threads, score| [score.median, -threads] }
        within = best.median * (1 - tolerance)
        threshold = best.ci95 ? [best.ci95[0], within].max : within
        knee_threads, knee = held.find { |_, score| score.median >= threshold }
        {
          "processes" => processes, "knee_threads" => knee_threads, "knee_score" => knee.median,
          "best_threads" => best_threads, "best_score" => best.median, "best_ci95" => best.ci95,
          "threshold" => threshold, "rule" => best.ci95 && best.ci95[0] > within ? "interval" : "tolerance", "tolerance" => tolerance,
          "gains" => gains(scored),
          "left_out_threads" => left_out.sort,
          "text" => text(processes, knee_threads, knee, best_threads, best, tolerance, scored, left_out.sort)
        }
      end

      # Each step to more threads: {"from", "to", "gain"} (the relative
      # change of the median score; nil from a score of 0).
      def gains(scored)
        scored.each_cons(2).map do |(from, a), (to, b)|
          { "from" => from, "to" => to, "gain" => a.median.positive? ? b.median.fdiv(a.median) - 1 : nil }
        end
      end

      def text(processes, knee_threads, knee, best_threads, best, tolerance, scored, left_out)
        count = "#{processes} process#{"es" unless processes == 1}"
        threads = knee_threads == 1 ? "1 thread" : "#{knee_threads} threads"
        within = if best.ci95 && best.ci95[0] > best.median * (1 - tolerance)
                   "within the 95% interval of the best"
                 else
                   "within #{Units.percent_trimmed(tolerance, digits: 0)} of the best"
                 end
        head = if knee_threads == best_threads
                 "#{count}: #{threads} score#{"s" if knee_threads == 1} best (#{Units.rate_rounded(best.median)} req/s)"
               else
                 "#{count}: #{threads} give#{"s" if knee_threads == 1} #{Units.rate_rounded(knee.median)} req/s, " \
                   "#{within} (#{best_threads} threads: #{Units.rate_rounded(best.median)} req/s)"
               end
        more = scored.map(&:first).select { |t| t > knee_threads }
        tail = more.empty? ? "" : "; more threads (#{more.join(", ")}) add nothing the batches can tell apart"
        tail += "; #{left_out.join(", ")} threads did not fit the budget" unless left_out.empty?
        tail += "; no more threads were tried" if more.empty? && left_out.empty?
        steps = step_text(scored)
        "#{head}#{tail}#{"; score per step: #{steps}" if steps}"
      end

      # "1→4 +218%, 4→8 +130%": the steps between thread counts that both
      # held the target; nil when there is none.
      def step_text(scored)
        held = scored.select { |_, score| score.qualified }
        return nil if held.size < 2

        held.each_cons(2).map do |(from, a), (to, b)|
          "#{from}→#{to} #{format("%+.0f%%", (b.median.fdiv(a.median) - 1) * 100)}"
        end.join(", ")
      end
    end
  end
end
