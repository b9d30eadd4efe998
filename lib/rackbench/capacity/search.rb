# frozen_string_literal: true

module Rackbench
  module Capacity
    # One capacity search: the highest open-loop rate whose steps pass
    # (Judge), as a state machine with no I/O. Ask it for the next step,
    # run that step however you like, tell it the verdict; repeat until it
    # asks for nothing. Fed the same verdicts, it asks for the same steps:
    # that is how an interrupted search is replayed from its stored steps.
    #
    #   search = Search.new(settings)
    #   while (ask = search.next_ask)
    #     search.record(judge(run(ask.rate)))
    #   end
    #   search.result.rate # => 384
    #
    # The search (doc/methodology.md, "Capacity search"):
    # 1. ramp: from start_rate, multiply by ramp after each pass until a
    #    step fails (or max_rate passes); if the first step fails, divide
    #    instead until one passes;
    # 2. bisect between the highest pass and the lowest fail until they
    #    are within the resolution (or 1 req/s);
    # 3. confirm: run the highest pass confirmations more times; if one
    #    fails, that rate is the lowest fail, step down by one resolution
    #    and confirm there.
    # An invalid step concludes nothing: the same rate is asked again, at
    # most MAX_INVALID_TRIES times in a row, then the search stops without
    # an answer (its lower bound, the highest pass, is still reported).
    class Search
      # One step to run: its phase (:ramp, :bisect or :confirm), rate
      # (whole req/s) and index (1-based, over the whole search).
      Ask = Struct.new(:phase, :rate, :index, keyword_init: true)
      # A step run: what was asked and its Judge::Verdict.
      Step = Struct.new(:ask, :verdict, keyword_init: true) do
        def rate = ask.rate
        def phase = ask.phase
        def status = verdict.status
      end
      # What the search concluded.
      # status :: :found (the capacity is rate), :capped (max_rate holds the
      #           target: the capacity is at least rate), :none (even the
      #           lowest rate tried fails), :unresolved (invalid steps or
      #           failed confirmations stopped it: no answer)
      # rate :: the answer in req/s, nil unless :found or :capped
      # lower_bound :: the highest rate that passed (nil if none)
      # first_fail :: the lowest rate that failed (nil if none)
      # resolution_rps :: how far the answer may lie under the true capacity
      # note :: one line saying why, for :none and :unresolved
      # steps :: every Step, in order
      Result = Struct.new(:status, :rate, :lower_bound, :first_fail, :resolution_rps, :note, :steps,
                          keyword_init: true)

      # An invalid step is asked again this many times in all, then the
      # search stops: the engine that cannot send a rate three times will
      # not a fourth.
      MAX_INVALID_TRIES = 3
      # Confirmation failures stepping the answer down, at most.
      MAX_STEP_DOWNS = 4
      # The ramp down stops under this rate: nothing holds the target.
      MIN_RATE = 1

      attr_reader :steps

      def initialize(settings)
        @settings = settings
        @steps = []
        @phase = :ramp
        @rate = whole(settings.start_rate)
        @pass = nil
        @fail = nil
        @invalid_tries = 0
        @confirmed = 0
        @step_downs = 0
        @result = nil
      end

      # The next step to run, or nil when the search is over.
      def next_ask
        return nil if @result

        Ask.new(phase: @phase, rate: @rate, index: @steps.size + 1)
      end

      # Records the Judge::Verdict of the step #next_ask asked for.
      def record(verdict)
        ask = next_ask or raise ArgumentError, "the search is over: no step was asked"

        @steps << Step.new(ask: ask, verdict: verdict)
        return invalid(verdict) if verdict.invalid?

        @invalid_tries = 0
        case @phase
        when :ramp then ramp(verdict.pass?)
        when :bisect then bisect(verdict.pass?)
        when :confirm then confirm(verdict.pass?)
        end
        self
      end

      def done?
        !@result.nil?
      end

      # The Result once done (nil before).
      def result
        @result
      end

      # Runs the whole search with +step+ (a callable: Ask => Judge::Verdict)
      # and returns its Result.
      def self.run(settings, &step)
        search = new(settings)
        while (ask = search.next_ask)
          search.record(step.call(ask))
        end
        search.result
      end

      private

      def ramp(passed)
        if passed
          @pass = @rate
          return start_bisecting if @fail # after the ramp down
          return start_confirming if @rate >= whole(@settings.max_rate)

          @rate = [whole(@rate * @settings.ramp), whole(@settings.max_rate)].min
        else
          @fail = @rate
          return start_bisecting if @pass

          lower = (@rate / @settings.ramp).floor
          return finish(:none, "#{@settings.target_text} fails even at #{@rate} #{unit}") if lower < MIN_RATE

          @rate = lower
        end
      end

      def start_bisecting
        @phase = :bisect
        resolved? ? start_confirming : @rate = midpoint
      end

      def bisect(passed)
        passed ? @pass = @rate : @fail = @rate
        resolved? ? start_confirming : @rate = midpoint
      end

      def start_confirming
        @phase = :confirm
        @rate = @pass
        @confirmed = 0
        conclude if @settings.confirmations.zero?
      end

      def confirm(passed)
        if passed
          @confirmed += 1
          conclude if @confirmed >= @settings.confirmations
          return
        end

        # The answer did not hold: it is the lowest fail now, one
        # resolution under it is the next candidate.
        @fail = @rate
        @step_downs += 1
        lower = whole(@rate - @settings.resolution_at(@rate))
        lower = @rate - 1 if lower >= @rate
        if @step_downs > MAX_STEP_DOWNS || lower < MIN_RATE
          @pass = nil if @pass && @pass >= @fail
          return finish(:unresolved, "confirmation failed #{@step_downs} times, last at #{@fail} #{unit}")
        end
        @pass = lower
        @rate = lower
        @confirmed = 0
      end

      def invalid(verdict)
        @invalid_tries += 1
        return self if @invalid_tries < MAX_INVALID_TRIES

        finish(:unresolved, "the step at #{@rate} #{unit} was invalid #{@invalid_tries} times " \
                            "(#{verdict.reason}): no conclusion beyond #{@pass ? "#{@pass} #{unit}" : "the start"}")
        self
      end

      def conclude
        capped = @fail.nil? && @pass >= whole(@settings.max_rate)
        finish(capped ? :capped : :found, capped ? "holds the target at max_rate: the capacity is higher" : nil,
               rate: @pass)
      end

      def finish(status, note, rate: nil)
        @result = Result.new(status: status, rate: rate, lower_bound: @pass, first_fail: @fail,
                             resolution_rps: rate && @fail ? @fail - rate : nil, note: note, steps: @steps.dup.freeze)
      end

      # What a step is counted in: req/s, or a broadcast's clients.
      def unit
        @settings.respond_to?(:unit) ? @settings.unit : "req/s"
      end

      # Resolved when the gap is within the resolution, or nothing lies
      # between the two whole rates.
      def resolved?
        gap = @fail - @pass
        gap <= 1 || gap <= @settings.resolution_at(@pass)
      end

      def midpoint
        ((@pass + @fail) / 2.0).round
      end

      def whole(rate)
        [rate.round, MIN_RATE].max
      end
    end
  end
end
