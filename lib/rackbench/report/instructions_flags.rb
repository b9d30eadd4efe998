# frozen_string_literal: true

module Rackbench
  class Report
    # The flags of a configuration's instructions per request (Flags
    # gathers them with the others, same kinds, same marks): too few ok
    # instructions batches for an interval, a batch far out of line (a
    # major GC that fell in one window and not in the others), a CV above
    # the limit. The machine's load flags nothing here: a count of
    # instructions does not depend on it.
    class InstructionsFlags
      # config :: a ConfigSummary; options :: the Report::Options
      def initialize(config, options)
        @summary = config.respond_to?(:instructions) ? config.instructions : nil
        @options = options
      end

      # [{"kind", "message"(, "batch")}], empty without instructions trials.
      def to_a
        return [] unless @summary

        [*too_few, *outliers, *high_variance]
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
        return [] unless cv && cv > @options.high_cv

        [{ "kind" => "high_variance",
           "message" => "instructions per request: CV #{Units.percent(cv, digits: 2)} > " \
                        "#{Units.percent(@options.high_cv, digits: 1)}" }]
      end
    end
  end
end
