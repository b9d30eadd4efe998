# frozen_string_literal: true

module Rackbench
  class Report
    # The flags of a configuration's instructions per request (Flags
    # gathers them with the others, same kinds, same marks): too few ok
    # instructions batches for an interval, a batch far out of line (a
    # major GC that fell in one window and not in the others), a CV above
    # the limit, batches in two clusters (the signature of work that falls
    # in some windows and not others: issue 31's major GC, 10% apart), and
    # major GC cycles in some batches' windows and not others'. The
    # machine's load flags nothing here: a count of instructions does not
    # depend on it.
    class InstructionsFlags
      # An instructions figure is steady to a tenth of a percent; above
      # this its CV says something moved (doc/methodology.md).
      HIGH_CV = 0.005
      # Two clusters: the widest gap between sorted batches is this many
      # times the widest spread inside either side, and at least
      # CLUSTER_MIN_GAP of the median.
      CLUSTER_GAP_FACTOR = 4.0
      CLUSTER_MIN_GAP = 0.005
      # config :: a ConfigSummary; options :: the Report::Options
      def initialize(config, options)
        @summary = config.respond_to?(:instructions) ? config.instructions : nil
        @options = options
      end

      # [{"kind", "message"(, "batch")}], empty without instructions trials.
      def to_a
        return [] unless @summary

        [*too_few, *outliers, *high_variance, *clusters, *gc_majors]
      end

      private

      def too_few
        n = @summary.batches
        return [] if n >= @options.min_batches

        [{ "kind" => "too_few_batches",
           "message" => "#{n} ok instructions batch(es): an interval and a verdict need #{@options.min_batches}" }]
      end

      def outliers
        values = @summary.values
        return [] if values.size < Flags::MIN_BATCHES_FOR_OUTLIERS

        z = Stats.robust_z(values)
        Stats.outliers(values, threshold: @options.outlier_z).map do |i|
          batch = @summary.batch_numbers[i]
          { "kind" => "outlier", "batch" => batch,
            "message" => format("batch %d: %s instructions per request, robust z %+.1f", batch,
                                Units.count_grouped(values[i]), z[i]) }
        end
      end

      def high_variance
        cv = @summary.summary.cv
        limit = [@options.high_cv, HIGH_CV].min
        return [] unless cv && cv > limit

        [{ "kind" => "high_variance",
           "message" => "instructions per request: CV #{Units.percent(cv, digits: 2)} > " \
                        "#{Units.percent(limit, digits: 1)}" }]
      end

      # Batches in two groups, each of two or more, far apart for their
      # own spread.
      def clusters
        low, high = self.class.clusters(@summary.values)
        return [] unless low

        median = Stats.median(@summary.values)
        [{ "kind" => "clusters",
           "message" => format("instructions per request in two clusters %.1f%% apart (%d batches near %s, %d near %s): " \
                               "work that falls in some windows and not others", (Stats.median(high) - Stats.median(low)) * 100 / median,
                               low.size, Units.count_grouped(Stats.median(low)), high.size, Units.count_grouped(Stats.median(high))) }]
      end

      # [low values, high values] when +values+ split in two clusters, else nil.
      def self.clusters(values)
        sorted = values.sort
        return nil if sorted.size < 4 || sorted.first <= 0

        gaps = (2..(sorted.size - 2)).map { |i| [sorted[i] - sorted[i - 1], i] }
        gap, at = gaps.max_by(&:first)
        low = sorted[0...at]
        high = sorted[at..]
        spread = [low.last - low.first, high.last - high.first].max
        return nil if gap < CLUSTER_MIN_GAP * Stats.median(sorted) || gap < CLUSTER_GAP_FACTOR * spread

        [low, high]
      end

      # Major GC cycles in some batches' windows and not in others': the
      # figure outside GC is not moved, the GC's own figure is.
      def gc_majors
        majors = @summary.gc.majors
        return [] if majors.empty? || majors.any?(&:nil?)

        with = majors.count(&:positive?)
        return [] if with.zero? || with == majors.size

        [{ "kind" => "gc_majors",
           "message" => "a major GC ran inside the window of #{with} of #{majors.size} batches: the GC's figure varies " \
                        "with it (the figure outside GC does not)" }]
      end
    end
  end
end
