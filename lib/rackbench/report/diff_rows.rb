# frozen_string_literal: true

module Rackbench
  class Report
    # The rows every diff shows (functions in instructions, frames in a
    # profile): per item, its mean per request over each side's batches,
    # the difference B - A, Welch's interval of that difference across the
    # batches (Stats.mean_difference_ci: why means and t, there), its share
    # of the whole difference, and whether it appears on one side only.
    # Sorted by the absolute difference, largest first. Means add up: the
    # items' differences sum to the whole's, less what no batch listed.
    #
    # Every interval of one diff is at the family's confidence (Bonferroni
    # over its items, Stats.family_confidence): with 300 functions, 95%
    # each would call some 15 of them changed in an A/A comparison; at the
    # family's, at most one in 20 comparisons calls any. An item whose
    # interval excludes 0 is "changed".
    #
    # An item missing from a batch counts 0 there: the batch listed only
    # its costliest items, and the item cost less than the batch's cutoff
    # (+a_unlisted+, +b_unlisted+: the most an unlisted item cost a batch of
    # that side). Its interval is widened by what those batches could have
    # held (their share of the side's batches times the cutoff), so that
    # an item near the cutoff, listed on one side and not the other, is
    # not marked changed for want of a figure.
    class DiffRows
      # One item compared. key :: what the caller keys items by; a, b ::
      # the means per request; difference :: b - a; difference_ci ::
      # [low, high] (nil below 2 batches a side); share :: of the whole
      # difference (nil when it is 0); only :: "a" or "b" when the other
      # side never listed it, else nil; changed :: the interval excludes 0
      # (nil without one).
      Row = Struct.new(:key, :a, :b, :difference, :difference_ci, :share, :only, :changed, keyword_init: true) do
        def to_h
          { "a" => a, "b" => b, "difference" => difference, "difference_ci" => difference_ci, "share" => share,
            "only" => only, "changed" => changed }
        end
      end

      attr_reader :rows, :confidence, :difference, :difference_ci

      # a, b :: one Hash per batch of the side: item key => value per request
      # a_totals, b_totals :: each batch's whole figure per request (what
      #                       the shares are of)
      # confidence :: the report's confidence, made the family's over the items
      # a_unlisted, b_unlisted :: the most an item a batch did not list
      #                           cost it, per request (default: 0, every
      #                           item is in every batch that had it)
      def initialize(a, b, a_totals:, b_totals:, confidence:, a_unlisted: 0.0, b_unlisted: 0.0)
        @unlisted = [a_unlisted.to_f, b_unlisted.to_f]
        keys = (a + b).flat_map(&:keys).uniq
        @confidence = Stats.family_confidence(confidence, [keys.size, 1].max)
        @difference = mean(b_totals) - mean(a_totals) if a_totals.any? && b_totals.any?
        @difference_ci = Stats.mean_difference_ci(a_totals, b_totals, confidence: confidence)
        @rows = keys.map { |key| row(key, a, b) }.sort_by.with_index { |row, i| [-row.difference.abs, i] }
      end

      # How many rows' intervals exclude 0.
      def changed_count
        @rows.count(&:changed)
      end

      private

      def row(key, a, b)
        xs = a.map { |batch| batch.fetch(key, 0.0) }
        ys = b.map { |batch| batch.fetch(key, 0.0) }
        difference = mean(ys) - mean(xs)
        ci = widened(Stats.mean_difference_ci(xs, ys, confidence: @confidence), key, a, b)
        only = if a.none? { |batch| batch.key?(key) } then "b"
               elsif b.none? { |batch| batch.key?(key) } then "a"
               end
        share = @difference && !@difference.zero? ? difference / @difference : nil
        Row.new(key: key, a: mean(xs), b: mean(ys), difference: difference, difference_ci: ci, share: share,
                only: only, changed: ci && (ci.first.positive? || ci.last.negative?))
      end

      # +ci+ widened by what the batches that did not list +key+ could
      # have held: A's mean up to (missing / batches) times A's cutoff
      # higher (the difference lower), B's likewise.
      def widened(ci, key, a, b)
        return nil unless ci

        missing = ->(batches) { batches.count { |batch| !batch.key?(key) }.fdiv(batches.size) }
        [ci[0] - (missing.call(a) * @unlisted[0]), ci[1] + (missing.call(b) * @unlisted[1])]
      end

      def mean(values)
        values.empty? ? 0.0 : values.sum.fdiv(values.size)
      end
    end
  end
end
