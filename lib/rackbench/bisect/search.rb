# frozen_string_literal: true

module Rackbench
  module Bisect
    # The search itself, without I/O: over the commits of a History
    # (indexes 0, the good commit, to size - 1, the bad one), which commits
    # to measure and what their comparisons mean. What a measurement and a
    # comparison are is the oracle's (Driver: a stored run per commit,
    # judged as `gate --strict` judges).
    #
    # git bisect's semantics, made robust for figures that move in
    # several steps:
    #
    # 1. The ends: good and bad are measured first, and the bisection
    #    starts only when bad is worse than good beyond the threshold
    #    (otherwise it stops: "no step", or "cannot say").
    # 2. An interval (a, b) whose end b is worse than a by at least
    #    min_step holds a step. Its commit nearest the middle, m, is
    #    measured and compared with both ends: each side that is worse by
    #    min_step is searched in turn, so a change made of two steps is
    #    found as two (asv's step detection finds every step; git bisect
    #    only the first bad commit). An interval with no commit left
    #    between its ends is a step: b is the first bad commit.
    # 3. A commit that cannot be measured (its build or its boot fails) is
    #    skipped, as `git bisect skip` does: another commit near the
    #    middle is measured instead, and a step whose ends have skipped
    #    commits between them names them all. A commit neither of whose
    #    comparisons can say, even at the most batches, is set aside the
    #    same way ("cannot say").
    # 4. A comparison that cannot say adds batches to the side with fewer,
    #    one at a time, up to max_batches, as `run --detect` adds them.
    #
    # The oracle answers:
    #   measure(index, batches) => nil, or why the commit cannot be measured
    #                              (it then has at least +batches+ batches)
    #   batches(index)          => the commit's batches so far
    #   compare(from, to, limit) => WORSE (to is worse than from beyond the
    #                              limit), NOT_WORSE (a change beyond it is
    #                              ruled out) or UNSURE
    class Search
      WORSE = :worse
      NOT_WORSE = :not_worse
      UNSURE = :unsure

      FOUND = "found"
      NO_STEP = "no step"
      CANNOT_SAY = "cannot say"
      UNMEASURABLE = "unmeasurable"
      SPREAD = "spread"

      # A step: the last commit of the good side measured (+from+), the
      # first of the bad side (+to+), and the commits between them that
      # could not be measured or judged (+between+): the first bad commit
      # is +to+ or one of those.
      Step = Struct.new(:from, :to, :between) do
        def exact? = between.empty?
      end
      # Two commits between which the figure worsened by min_step or more,
      # while neither of the two halves at the commit between them did: a
      # change made of steps smaller than min_step.
      Spread = Struct.new(:from, :to)
      # Two commits whose comparison could not say, even at the most
      # batches, beside a side that held a step: a further step there is
      # neither found nor ruled out.
      Unsure = Struct.new(:from, :to)
      # A commit set aside, and why: "skipped" (it could not be measured)
      # or "cannot say" (neither comparison could say).
      SetAside = Struct.new(:status, :reason)

      Outcome = Struct.new(:status, :ends, :steps, :spreads, :unsure, :set_aside, :reason, keyword_init: true)

      attr_reader :size, :set_aside

      # :size :: commits, good and bad included (at least 2)
      # :settings :: Settings (threshold, min_step, min_batches, max_batches)
      # :oracle :: see above
      # :on_ends :: called with the ends' verdict once it is known (progress)
      # :on_split :: called with (from, m, to, left, right) after each commit between two is judged (progress)
      def initialize(size:, settings:, oracle:, on_ends: nil, on_split: nil)
        raise ArgumentError, "a history has at least 2 commits, got #{size}" unless size >= 2

        @size = size
        @settings = settings
        @oracle = oracle
        @on_ends = on_ends
        @on_split = on_split
        @set_aside = {}
        @steps = []
        @spreads = []
        @unsure = []
      end

      # Runs the search; returns its Outcome.
      def run
        last = @size - 1
        [0, last].each do |index|
          reason = @oracle.measure(index, @settings.min_batches)
          next unless reason

          @set_aside[index] = SetAside.new("skipped", reason)
          return outcome(UNMEASURABLE, reason: "the #{index.zero? ? "good" : "bad"} commit cannot be measured: #{reason}",
                                       ends: nil)
        end

        ends = resolve(0, last, @settings.threshold)
        @on_ends&.call(ends)
        return outcome(NO_STEP, ends: ends) if ends == NOT_WORSE
        return outcome(CANNOT_SAY, ends: ends) if ends == UNSURE

        find(0, last)
        outcome(@steps.empty? ? SPREAD : FOUND, ends: ends)
      end

      # The judgement of +from+ against +to+ at +limit+, batches added to
      # the side with fewer while it cannot say, up to max_batches. A
      # commit that fails in an added batch stops the additions: its
      # comparisons can no longer say.
      def resolve(from, to, limit)
        loop do
          verdict = @oracle.compare(from, to, limit)
          return verdict unless verdict == UNSURE

          counts = { from => @oracle.batches(from), to => @oracle.batches(to) }
          fewest = counts.values.min
          return UNSURE if fewest >= @settings.max_batches

          counts.select { |_, n| n == fewest }.each_key do |index|
            return UNSURE if @oracle.measure(index, fewest + 1)
          end
        end
      end

      private

      # Searches (a, b), whose end b is worse than a by at least min_step.
      def find(from, to)
        loop do
          inner = (from + 1...to).reject { |i| @set_aside.key?(i) }
          if inner.empty?
            @steps << Step.new(from, to, (from + 1...to).to_a)
            return
          end

          middle = (from + to) / 2.0
          split = inner.min_by { |i| [(i - middle).abs, i] }
          reason = @oracle.measure(split, @settings.min_batches)
          if reason
            @set_aside[split] = SetAside.new("skipped", reason)
            next
          end

          left = resolve(from, split, @settings.min_step)
          right = resolve(split, to, @settings.min_step)
          @on_split&.call(from, split, to, left, right)
          break if split_into(from, split, to, left, right)

          @set_aside[split] = SetAside.new(CANNOT_SAY, "its comparisons with both sides could not say at " \
                                                       "#{@settings.max_batches} batches")
        end
      end

      # Follows the sides of a judged split; false when neither says: the
      # commit between is set aside.
      def split_into(from, split, to, left, right)
        if left == WORSE || right == WORSE
          @unsure << Unsure.new(from, split) if left == UNSURE
          @unsure << Unsure.new(split, to) if right == UNSURE
          find(from, split) if left == WORSE
          find(split, to) if right == WORSE
          true
        elsif left == NOT_WORSE && right == NOT_WORSE
          @spreads << Spread.new(from, to)
          true
        else
          false
        end
      end

      def outcome(status, ends:, reason: nil)
        Outcome.new(status: status, ends: ends, steps: @steps.sort_by(&:from), spreads: @spreads.sort_by(&:from),
                    unsure: @unsure.sort_by(&:from), set_aside: @set_aside.sort.to_h, reason: reason)
      end
    end
  end
end
