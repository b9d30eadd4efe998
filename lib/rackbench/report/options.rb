# frozen_string_literal: true

module Rackbench
  class Report
    # How a report judges its configurations. Every threshold is stored in
    # the report's "settings" so a reader knows what a verdict meant.
    #
    # :baseline :: what each configuration is compared with (Report::Baseline;
    #              default: the first configuration)
    # :equivalence :: half-width of the band around a ratio of 1 inside which
    #                 a difference is too small to matter (default: 0.01, ±1%)
    # :instructions_equivalence :: the same band for instructions per request
    #                              (default: 0.001, ±0.1%). Their batches vary
    #                              by about 0.1%, and a change they exist to
    #                              find is often under 1% (an interpreter
    #                              patch): time's band would call it negligible
    # :detect :: the relative difference the batches-needed estimate is for (default: 0.01)
    # :confidence :: confidence level of every interval (default: 0.95)
    # :resamples :: bootstrap resamples (default: 10,000: the percentile
    #               interval's Monte Carlo error is then well below its width)
    # :seed :: bootstrap seed, so the same data always gives the same report (default: 1)
    # :high_cv :: coefficient of variation above which a configuration is
    #             flagged as noisy (default: 0.05)
    # :outlier_z :: robust z-score beyond which a batch is flagged (default: 3.5,
    #               Iglewicz and Hoaglin's cut-off)
    # :min_batches :: ok batches a configuration needs for an interval and a
    #                 verdict (default: 5). A percentile bootstrap of 2 or 3
    #                 batches covers far less than its nominal 95%: with 3 the
    #                 interval of a median is at most the range of the batches,
    #                 which holds the true median 75% of the time, and
    #                 identical configurations were called different in 11% of
    #                 simulated cases; from 5 batches on, 92% and 3.5%
    #                 (doc/methodology.md).
    # :max_error_rate :: share of one request-list entry's requests that may
    #                    fail before it flags its configuration (page_errors)
    #                    (default: nil, the limit the trials were judged by:
    #                    the built-in app's max_error_rate, else 1%)
    Options = Struct.new(:baseline, :equivalence, :detect, :confidence, :resamples, :seed, :high_cv, :outlier_z,
                         :min_batches, :max_error_rate, :instructions_equivalence, keyword_init: true) do
      def initialize(baseline: nil, equivalence: 0.01, detect: 0.01, confidence: 0.95, resamples: 10_000, seed: 1,
                     high_cv: 0.05, outlier_z: 3.5, min_batches: 5, max_error_rate: nil, instructions_equivalence: 0.001)
        super
        check_fraction(:max_error_rate, max_error_rate, 0.0..1.0) unless max_error_rate.nil?
        unless min_batches.is_a?(Integer) && min_batches >= 2
          raise UsageError, "min_batches must be an integer >= 2, got #{min_batches.inspect}"
        end
        check_fraction(:equivalence, equivalence, 0.0...0.5)
        check_fraction(:instructions_equivalence, instructions_equivalence, 0.0...0.5)
        check_fraction(:detect, detect, 0.0001...1.0)
        check_fraction(:confidence, confidence, 0.5...1.0)
        raise UsageError, "resamples must be an integer >= 100, got #{resamples.inspect}" unless resamples.is_a?(Integer) && resamples >= 100
        raise UsageError, "seed must be an integer >= 0, got #{seed.inspect}" unless seed.is_a?(Integer) && seed >= 0
      end

      # The settings block of the report document.
      def to_h
        { "equivalence" => equivalence, "detect" => detect, "confidence" => confidence,
          "bootstrap_resamples" => resamples, "bootstrap_seed" => seed, "high_cv" => high_cv,
          "outlier_z" => outlier_z, "min_batches" => min_batches, "max_error_rate" => max_error_rate,
          "baseline_spec" => baseline, "instructions_equivalence" => instructions_equivalence }
      end

      # Keyword arguments for Stats.compare; +instructions+: for
      # instructions per request (their own equivalence band).
      def compare_options(instructions: false)
        { equivalence: instructions ? instructions_equivalence : equivalence, detect: detect, confidence: confidence,
          resamples: resamples, seed: seed, min_batches: min_batches }
      end

      private

      def check_fraction(name, value, range)
        return if value.is_a?(Numeric) && range.cover?(value)

        raise UsageError, "#{name} must be a number in #{range.begin}#{range.exclude_end? ? "..." : ".."}#{range.end}, " \
                         "got #{value.inspect}"
      end
    end
  end
end
