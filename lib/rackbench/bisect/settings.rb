# frozen_string_literal: true

module Rackbench
  module Bisect
    # What `rackbench bisect` was asked, checked before anything runs:
    # the two refs, whose history (a ruby built from a git repository, or
    # an app given by path in one), the figure and how much worse the bad
    # commit must be, the smallest step the search chases, and the batches
    # each commit runs. Frozen; a bad value raises UsageError naming the
    # option.
    #
    # good, bad :: the refs (any name git takes: a tag, a branch, a commit)
    # over :: "ruby" or "app", with an entry's name ("app=myapp"), or nil
    #         when the experiment has one candidate only (Subject.find)
    # figure :: the Report::BatchFigures::Figure judged (instructions, rps,
    #           cpu, p50, p99, ...)
    # threshold :: how much worse the bad commit must be than the good one
    #              for a bisection to start, a fraction (0.01)
    # min_step :: the smallest change between two commits the search
    #             chases into: a regression in several steps is found
    #             step by step as long as each is at least this (default:
    #             half the threshold)
    # min_batches :: batches each commit runs first, the least an interval
    #                needs (Report::Options#min_batches; default 5)
    # max_batches :: the most batches a commit runs when its comparison
    #                cannot say (default: twice min_batches)
    # confidence :: of every interval (default 0.95)
    Settings = Struct.new(:good, :bad, :over, :figure, :threshold, :min_step, :min_batches, :max_batches, :confidence,
                          keyword_init: true) do
      # The `measure:` a step experiment runs for each figure: instructions
      # per request are counted under valgrind, every other figure is a
      # time trial's.
      def measure
        figure.instructions ? Instructions::INSTRUCTIONS : Instructions::TIME
      end

      # The options of every Report the bisect reads (the gate's defaults
      # otherwise: equivalence bands, bootstrap seed and resamples).
      def report_options
        { confidence: confidence, min_batches: min_batches }
      end

      # The gate's rule a comparison is judged by: the figure, +limit+ worse.
      def rule(limit)
        Gate::Rule.new(figure, limit)
      end

      # "instructions per request 1% worse, steps of 0.5%, 5 to 10 batches per commit"
      def describe
        "#{figure.words} #{Units.percent_trimmed(threshold)} worse from good to bad, steps of at least " \
          "#{Units.percent_trimmed(min_step)} chased, #{min_batches} to #{max_batches} batches per commit"
      end

      def to_h
        { "good" => good, "bad" => bad, "over" => over, "figure" => figure.name, "figure_words" => figure.words,
          "threshold" => threshold, "min_step" => min_step, "min_batches" => min_batches, "max_batches" => max_batches,
          "confidence" => confidence }
      end
    end

    # The defaults of the command line, and what --over takes.
    DEFAULT_THRESHOLD = 0.01
    DEFAULT_MIN_BATCHES = 5
    OVER = /\A(ruby|app)(?:=([A-Za-z0-9._+-]+))?\z/

    class << Settings
      # Settings from the command line's values (Strings and numbers as
      # OptionParser gives them). Raises UsageError.
      #
      # :measure :: a figure's name (BatchFigures), or nil for the default
      #             (+default_measure+)
      # :threshold, :min_step :: fractions, or nil for the defaults
      def build(good:, bad:, default_measure:, over: nil, measure: nil, threshold: nil, min_step: nil, min_batches: nil,
                max_batches: nil, confidence: 0.95)
        raise UsageError, "bisect needs --good REF and --bad REF (a tag, a branch or a commit)" if good.to_s.empty? || bad.to_s.empty?
        if over && !OVER.match?(over)
          raise UsageError, "--over takes ruby or app, or ruby=NAME or app=NAME for one entry, got '#{over}'"
        end

        figure = Report::BatchFigures.fetch(measure || default_measure)
        threshold ||= DEFAULT_THRESHOLD
        min_step ||= threshold / 2.0
        min_batches ||= DEFAULT_MIN_BATCHES
        max_batches ||= 2 * min_batches
        check_fraction("--threshold", threshold)
        check_fraction("--min-step", min_step)
        raise UsageError, "--min-step (#{Units.percent_trimmed(min_step)}) cannot exceed --threshold " \
                          "(#{Units.percent_trimmed(threshold)})" if min_step > threshold
        raise UsageError, "--min-batches must be an integer >= 2, got #{min_batches.inspect}" \
          unless min_batches.is_a?(Integer) && min_batches >= 2
        raise UsageError, "--max-batches must be an integer >= --min-batches (#{min_batches}), got #{max_batches.inspect}" \
          unless max_batches.is_a?(Integer) && max_batches >= min_batches
        raise UsageError, "--confidence must be between 50% and 99.99%, got #{confidence.inspect}" \
          unless confidence.is_a?(Numeric) && confidence.between?(0.5, 0.9999)

        Settings.new(good: good.to_s, bad: bad.to_s, over: over, figure: figure, threshold: threshold, min_step: min_step,
                     min_batches: min_batches, max_batches: max_batches, confidence: confidence).freeze
      end

      # [kind, name] of --over ("app=myapp" => ["app", "myapp"]), or nil.
      def over_parts(over)
        match = over && OVER.match(over)
        match && [match[1], match[2]]
      end

      private

      def check_fraction(option, value)
        return if value.is_a?(Numeric) && value.positive? && value < 1

        raise UsageError, "#{option} takes a percentage above 0% and below 100%, e.g. 1%, got #{value.inspect}"
      end
    end
  end
end
