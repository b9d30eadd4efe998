# frozen_string_literal: true

require "rackbench/bisect"

module Rackbench
  module Test
    # A model of measured commits for Bisect::Search's tests: each commit
    # has a true figure (lower is better, as instructions per request);
    # a comparison knows the change from one commit to another up to a
    # margin that shrinks with the batches measured (noise / sqrt(batches)),
    # and answers as the gate's strict judge would: worse beyond the limit,
    # a change beyond it ruled out, or unsure. Commits in +unmeasurable+
    # cannot be measured (their build fails), with that reason; commits in
    # +fails_later+ fail from that batch on.
    class BisectOracle
      attr_reader :measured, :asked

      # values :: the figure of each commit, index 0 the good one
      # :noise :: the comparison's margin at one batch, a fraction (default: 0)
      # :unmeasurable :: index => reason
      # :fails_later :: index => the first batch that fails
      def initialize(values, noise: 0.0, unmeasurable: {}, fails_later: {})
        @values = values
        @noise = noise
        @unmeasurable = unmeasurable
        @fails_later = fails_later
        @batches = Hash.new(0)
        @measured = []
        @asked = []
      end

      def measure(index, batches)
        return @unmeasurable[index] if @unmeasurable.key?(index)

        first_failing = @fails_later[index]
        return "batch #{first_failing} failed" if first_failing && batches >= first_failing

        @measured << index unless @measured.include?(index)
        @batches[index] = [@batches[index], batches].max
        nil
      end

      def batches(index) = @batches[index]

      def compare(from, to, limit)
        @asked << [from, to, limit]
        change = @values[to] / @values[from] - 1.0
        margin = @noise / Math.sqrt([@batches[from], @batches[to]].min)
        if change - margin > limit then Rackbench::Bisect::Search::WORSE
        elsif change + margin <= limit then Rackbench::Bisect::Search::NOT_WORSE
        else Rackbench::Bisect::Search::UNSURE
        end
      end

      # The figures of a history of +size+ commits with steps: index =>
      # the change it brings (0.02: 2% worse than its parent).
      def self.history(size, steps = {}, base: 1_000_000.0)
        figure = base
        (0...size).map do |index|
          figure *= 1.0 + steps.fetch(index, 0.0)
          figure
        end
      end
    end
  end
end
