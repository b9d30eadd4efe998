# frozen_string_literal: true

module Rackbench
  module Stats
    # The steps of a published series (one configuration's figure across
    # nightly runs), found run after run as a dashboard would have found
    # them, each then confirmed or refuted by the runs after it, and a
    # step in the worse direction marked fixed by a later step back. A
    # pure function of the runs' medians (and intervals), in order: the
    # same runs give the same steps whether they are published at once or
    # one night at a time.
    #
    # Two rules, by how much the series knows of its own noise:
    #
    # * **default** (fewer than +min_pairs+ pairs of neighbouring runs):
    #   history's change point (Stats.outside_band: the run's interval
    #   wholly outside the band of the runs since the last step, widened by
    #   the equivalence band) and a change of at least +default_threshold+
    #   (the gate's default, 2%), from the one newest run;
    # * **learned**: the series' run-to-run noise sigma (Stats.run_noise,
    #   over its last +noise_pairs+ neighbouring pairs not split by a step:
    #   "A/A-like neighbours") sets the threshold. A step at run j is a
    #   difference between the mean log median of the runs since j (up to
    #   +max_after+) and of the runs before it (up to +max_before+, since
    #   the last step) whose z = difference / (sigma sqrt(1/na + 1/nb)) is
    #   at least +z+ and whose size is at least the equivalence band. A big
    #   step shows in one run; a small one once enough runs agree (a 5% step
    #   where one run's median moves 2% by noise needs about 6). Of the
    #   candidate splits the largest z places the step.
    #
    # Why z = 5: a series published nightly for a year is tested some
    # 5,000 times (runs x candidate splits); at 5 standard errors a series
    # of pure noise flags a step about once in 3 million tests.
    #
    # A step is "detected" when found, "confirmed" once the runs after its
    # first agree (learned: their mean is +z_confirm+ standard errors from
    # the old level; default: their median has moved by the default
    # threshold), and "refuted" when they are back (a lone outlier, or a
    # busy night): then it never happened, and the level it left goes on.
    # Runs of one revision (+groups+: a re-run) are never split.
    class StepDetection
      Settings = Struct.new(:equivalence, :default_threshold, :min_pairs, :noise_pairs, :z, :z_confirm, :z_back,
                            :max_before, :max_after, :min_before, :location_margin, keyword_init: true) do
        def initialize(equivalence: 0.01, default_threshold: 0.02, min_pairs: 10, noise_pairs: 100, z: 5.0,
                       z_confirm: 3.0, z_back: 1.0, max_before: 20, max_after: 14, min_before: 3, location_margin: 8.0)
          super
        end
      end

      # index :: the first run at the new level (the step lies between the
      #          run before it and this one); first, last :: the first and
      #          last run it may be at (StepDetection#relocate)
      # found_at :: the run at which it was found
      # direction :: "up" or "down"; change :: the new level against the
      #          old, a fraction (-0.05: 5% lower); interval :: [low, high] of change
      # before, after :: the runs of the old level and of the new so far
      # level_before, level_after :: the two levels (geometric means of medians)
      # rule :: "learned" or "default"; threshold :: the one-run threshold when found
      # state :: "detected", "confirmed" or "refuted"; resolved_at :: the run that decided it
      # fixed_at :: for a step in the worse direction, the step that brought the figure back
      Step = Struct.new(:index, :first, :last, :direction, :change, :interval, :before, :after, :level_before,
                        :level_after, :rule, :threshold, :state, :found_at, :resolved_at, :fixed_at, keyword_init: true)

      attr_reader :steps, :noise

      # medians :: one per run, nil for a run without the figure (failed)
      # :intervals :: one [low, high] or nil per run (the default rule needs them)
      # :groups :: one key per run; runs with equal keys are one revision (default: all differ)
      # :worse :: "up" or "down": which direction a regression moves
      def initialize(medians, intervals: nil, groups: nil, worse: "down", settings: Settings.new)
        @medians = medians
        @intervals = intervals || Array.new(medians.size)
        @groups = groups || medians.each_index.to_a
        @worse = worse
        @s = settings
        detect
      end

      private

      def detect
        @steps = []
        @valued = []   # indexes of runs with a median
        @position = {} # index => its position in @valued
        @prefix = [0.0]
        @pairs = []    # [later index, log difference] of neighbouring runs
        @starts = []   # segment starts before the current one
        @start = nil
        @open = nil
        @medians.each_with_index do |median, n|
          next if median.nil?

          add(n, Math.log(median))
          resolve(n) if @open
          find(n) unless @open
          update_levels(n)
        end
        @noise = noise_at(@valued.last)
        remove_instance_variable(:@noise_key) if defined?(@noise_key)
      end

      def add(n, x)
        if @valued.last
          @pairs << [n, x - log_at(@valued.last)]
          push_window(@pairs.last)
        end
        @position[n] = @valued.size
        @valued << n
        @prefix << @prefix.last + x
        @start ||= n
      end

      def log_at(index) = Math.log(@medians[index])

      # Mean log median of @valued positions [from, to).
      def mean(from, to) = (@prefix[to] - @prefix[from]) / (to - from)

      def find(n)
        noise = noise_at(n)
        step = noise.rule == "learned" ? learned_step(n, noise) : default_step(n, noise)
        return unless step

        step.found_at = n
        @steps << step
        @starts << @start
        @start = step.index
        @open = step
        relocate(step, n)
        resolve(n) if n > step.index
      end

      def boundary?(k) = k.positive? && @groups[@valued[k]] != @groups[@valued[k - 1]]

      def learned_step(n, noise)
        last = @position[n]
        first = @position[@start]
        best = nil
        ([first + @s.min_before, last - @s.max_after + 1].max..last).each do |k|
          next unless boundary?(k)

          b0 = [first, k - @s.max_before].max
          diff = mean(k, last + 1) - mean(b0, k)
          se = noise.sigma * Math.sqrt(1.0 / (last - k + 1) + 1.0 / (k - b0))
          z = se.positive? ? diff.abs / se : Float::INFINITY
          next unless z >= noise.z && Math.exp(diff.abs) - 1 >= @s.equivalence

          best = [z, k] unless best && best[0] >= z
        end
        best && make_step(best[1], first, last, rule: "learned", threshold: noise.threshold)
      end

      def default_step(n, noise)
        last = @position[n]
        first = @position[@start]
        return nil unless last > first && boundary?(last) && @intervals[n]

        band = @valued[first...last].filter_map { |i| @intervals[i] }
        return nil if band.empty?

        band = [band.map(&:first).min, band.map(&:last).max]
        level = Stats.median(@valued[first...last].map { |i| @medians[i] })
        return nil unless Stats.outside_band(@intervals[n], band, @s.equivalence)
        return nil unless (@medians[n] / level - 1).abs >= @s.default_threshold

        low, high = @intervals[n]
        make_step(last, first, last, rule: "default", threshold: noise.threshold,
                                     interval: [low / band[1] - 1, high / band[0] - 1])
      end

      # A step whose first run at the new level is at position k, the
      # level it left starting at position +first+, runs up to +last+.
      def make_step(k, first, last, rule:, threshold:, interval: nil)
        step = Step.new(index: @valued[k], first: @valued[k], last: @valued[k], rule: rule, threshold: threshold,
                        interval: interval, state: "detected")
        measure(step, first, last)
      end

      # The step's levels, change and (learned) interval from the runs
      # before it (since position +first+, at most max_before) and after it
      # (up to position +last+).
      def measure(step, first, last)
        k = @position[step.index]
        b0 = [first, k - @s.max_before].max
        step.before = @valued[b0...k]
        step.after = @valued[k..last]
        step.level_before = if step.rule == "learned" then Math.exp(mean(b0, k))
                            else Stats.median(step.before.map { |i| @medians[i] })
                            end
        step.level_after = Math.exp(mean(k, last + 1))
        step.change = step.level_after / step.level_before - 1
        step.direction = step.change.positive? ? "up" : "down"
        if step.rule == "learned"
          sigma = sigma_at(@valued[last])
          diff = Math.log(step.level_after / step.level_before)
          se = sigma * Math.sqrt(1.0 / step.after.size + 1.0 / step.before.size)
          step.interval = [Math.exp(diff - 1.96 * se) - 1, Math.exp(diff + 1.96 * se) - 1]
        end
        step
      end

      # Where a learned step lies, as its runs accumulate until it is
      # confirmed: the split of the runs since the level before it (at most
      # max_before + max_after of them) that explains most of their spread,
      # and every split whose explained spread is within location_margin
      # (in units of sigma squared) of it: the runs the step may as well be
      # at. A small step in a noisy series is not placed on one night, and
      # its range says so (a bisect then covers every night of it).
      def relocate(step, n)
        return unless step.rule == "learned"

        first = @position[@starts.last]
        last = @position[n]
        w0 = [first, last - @s.max_before - @s.max_after].max
        # A series whose runs never differ (instructions counted exactly)
        # has a sigma of 0: any split that moves the level is then certain.
        sigma = [sigma_at(n), Float::EPSILON].max
        scores = ((w0 + 1)..last).select { |k| boundary?(k) }.to_h do |k|
          nb = k - w0
          na = last - k + 1
          [k, nb * na * (mean(k, last + 1) - mean(w0, k))**2 / ((nb + na) * sigma**2)]
        end
        best, top = scores.max_by { |k, score| [score, -k] }
        plausible = scores.select { |_, score| score >= top - @s.location_margin }.keys
        @start = step.index = @valued[best]
        step.first = @valued[plausible.min]
        step.last = @valued[plausible.max]
        measure(step, first, last)
      end

      # Confirms or refutes the open step from the runs after its first.
      def resolve(n)
        step = @open
        relocate(step, n)
        later = @valued[(@position[step.index] + 1)..@position[n]]
        return if later.empty?

        sign = step.direction == "up" ? 1 : -1
        verdict = step.rule == "learned" ? learned_verdict(step, later, sign, n) : default_verdict(step, later, sign)
        return unless verdict

        step.state = verdict
        step.resolved_at = n
        @open = nil
        if verdict == "refuted"
          @start = @starts.pop
        elsif step.direction != @worse
          mark_fixed(step, n)
        end
      end

      def learned_verdict(step, later, sign, n)
        sigma = sigma_at(n)
        mean_later = later.sum { |i| log_at(i) } / later.size
        se = sigma * Math.sqrt(1.0 / later.size + 1.0 / step.before.size)
        z = se.positive? ? sign * (mean_later - Math.log(step.level_before)) / se : sign * Float::INFINITY
        return "confirmed" if z >= @s.z_confirm
        return "refuted" if z <= @s.z_back
        return nil if later.size < @s.max_after

        z >= (@s.z_confirm + @s.z_back) / 2 ? "confirmed" : "refuted"
      end

      def default_verdict(step, later, sign)
        moved = sign * (Stats.median(later.map { |i| @medians[i] }) / step.level_before - 1)
        return "confirmed" if moved >= @s.default_threshold
        return "refuted" if moved < @s.default_threshold / 2
        return nil if later.size < @s.max_after

        "refuted"
      end

      # A confirmed step in the better direction fixes every confirmed
      # step in the worse direction whose old level it returns to: within
      # the equivalence band, or half the regression's size, whichever is
      # larger.
      def mark_fixed(better, n)
        level = Math.exp(mean(@position[better.index], @position[n] + 1))
        @steps.each do |step|
          next unless step.direction == @worse && step.state == "confirmed" && step.fixed_at.nil?

          remaining = @worse == "up" ? level / step.level_before - 1 : step.level_before / level - 1
          step.fixed_at = better.index if remaining <= [@s.equivalence, step.change.abs / 2].max
        end
      end

      # The newest step's new level, as more runs join it.
      def update_levels(n)
        step = @steps.reverse.find { |s| s.state != "refuted" }
        return unless step && @start == step.index && !step.equal?(@open)

        measure(step, @position[@starts.last], @position[n])
      end
    end
  end
end

require_relative "step_detection/noise"
