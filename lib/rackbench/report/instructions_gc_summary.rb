# frozen_string_literal: true

module Rackbench
  class Report
    # Ruby's GC in a configuration's instructions windows, over its ok
    # batches (the records' instructions.gc): the GC's instructions per
    # request (median, interval, CV, and against the baseline's the ratio
    # with its verdict), the cycles per 1,000 requests, and what set off the
    # major ones. The GC's cost is real work: the headline figure leaves it
    # out only to report it here, never to drop it (doc/methodology.md).
    class InstructionsGcSummary
      # trials :: the configuration's ok instructions trials (TrialEntry)
      # options :: the Report::Options
      def initialize(trials, options)
        @options = options
        docs = trials.map { |t| t.instructions["gc"] }
        @known = !docs.empty? && docs.all? { |d| d.is_a?(Hash) && d["per_request"] }
        @docs = docs.compact
        @requests = trials.map { |t| t.instructions["requests"].to_f }
        @values = @known ? docs.map { |d| d["per_request"] } : []
        @summary = Stats.summary(@values)
        @ci = if @values.size >= options.min_batches
                Stats.bootstrap_ci(@values, statistic: :median, confidence: options.confidence,
                                            resamples: options.resamples, seed: options.seed)
              end
      end

      attr_reader :values

      # Whether every ok batch has its GC instructions.
      def known? = @known

      # Per batch: major cycles (nil where unknown), to tell the batches
      # that had one from those that did not (InstructionsFlags).
      def majors
        @docs.map { |d| d.dig("cycles", "major") }
      end

      # Against +baseline+ (another InstructionsGcSummary): {"ratio",
      # "ratio_ci95", "verdict"} in the words of time (more GC work:
      # "slower"), nil when either has no GC figure, or a batch of either
      # ran no GC at all (a ratio to nothing: the medians say it).
      def compare(baseline)
        return nil unless known? && baseline.known? && !@values.empty? && !baseline.values.empty?
        return nil unless (@values + baseline.values).all?(&:positive?)

        c = Stats.compare(baseline.values, @values, **@options.compare_options(instructions: true))
        verdict = { Stats::FASTER => Stats::SLOWER, Stats::SLOWER => Stats::FASTER }.fetch(c.verdict, c.verdict)
        { "ratio" => c.ratio, "ratio_ci95" => c.ratio_ci, "verdict" => verdict }
      end

      def to_h(baseline: nil)
        {
          "per_request" => @known ? { "median" => @summary.median, "cv" => @summary.cv, "ci95" => @ci,
                                      "per_batch" => @values } : nil,
          "cycles_per_1000" => cycles_per_1000,
          "major_by" => @docs.flat_map { |d| Array(d["major_by"]) }.uniq.sort,
          "source" => @docs.map { |d| d["source"] }.compact.uniq.first,
          "against_baseline" => baseline && compare(baseline)
        }
      end

      private

      # The median over the batches of each kind's cycles per 1,000 requests.
      def cycles_per_1000
        return nil if @docs.empty? || @docs.any? { |d| d["cycles"].nil? }

        %w[minor major compactions].to_h do |kind|
          rates = @docs.zip(@requests).map { |d, n| n.positive? ? d["cycles"][kind].to_f * 1000 / n : 0.0 }
          [kind, Stats.summary(rates).median]
        end
      end
    end
  end
end
