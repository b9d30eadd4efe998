# frozen_string_literal: true

require_relative "trial_causes"

module Rackbench
  class Report
    # What a reader should doubt about one configuration. Flag, never drop:
    # an outlier batch stays in every statistic, because dropping data that
    # looks wrong is how benchmarks end up saying what their author hoped.
    #
    # Each flag is {"kind", "message"} plus "batch" where one batch is meant:
    # outlier :: a batch's throughput has a robust z-score beyond the limit
    #            (with 5 batches or more)
    # high_variance :: coefficient of variation over the limit: more batches,
    #                  or a quieter machine, are needed
    # warmup_too_short :: throughput still rose during a batch's measured
    #                     window (Stats.trend), so it measured a warming server
    # engine_saturated :: the load engine was busy > 90% of the time: it may
    #                     have limited the throughput, not the server
    # warmup_errors :: requests failed during a batch's warmup (a login
    #                  answered 422, a page 500): the window may not have
    #                  measured the session or the pages meant
    # unsent_requests :: open loop: requests scheduled in a batch's window
    #                    were never sent (the server held every connection):
    #                    the offered rate was not what the batch served
    # busy_machine :: other processes used more than 10% of a CPU during a
    #                 batch's measured window (MachineLoad)
    # page_errors :: one entry of the request list (a page) failed more
    #                than the configuration's max_error_rate of its requests
    #                in the measured windows, or failed any request in the
    #                warmups (a login answering 422): the whole mix can stay
    #                under the limit while one page is broken. Carries
    #                "entry", the entry's label
    # unserved_connections :: connection slots (or h2c stream slots) that
    #                         got no response in a batch's window: the figures
    #                         are those of the slots the server served, not of
    #                         the load named (with the likely cause)
    # gems_differ :: the configuration's servers loaded other versions of
    #                gems than its baseline's, and no dimension that
    #                chooses gems (app, server, gem.NAME) tells them apart,
    #                so the comparison measures the gems too (`gems:
    #                per_ruby`); or its own batches loaded different gems.
    #                Carries "gems", the names
    # failed :: trials of this configuration that failed (with the first reason)
    # too_few_batches :: fewer ok batches than Options#min_batches: no interval
    #                    or verdict is given
    class Flags
      # Each kind's one-letter mark in the terminal table's flags column.
      MARKS = { "failed" => "F", "too_few_batches" => "n", "outlier" => "o", "high_variance" => "v",
                "clusters" => "k", "gc_majors" => "m", "warmup_too_short" => "w", "engine_saturated" => "s",
                "unserved_connections" => "c",
                "warmup_errors" => "e", "unsent_requests" => "u", "busy_machine" => "b", "page_errors" => "p",
                "gems_differ" => "g" }.freeze

      # config :: the ConfigSummary flagged
      # options :: the Report::Options judging it
      # :unit :: what its throughput counts (default: "req/s")
      def initialize(config, options, unit: "req/s")
        @config = config
        @options = options
        @unit = unit
      end

      # Every flag of the configuration: [{"kind", "message"(, "batch" or
      # "entry")}].
      def to_a
        [*failed, *too_few, *outliers, *high_variance, *warmup, *saturated, *unserved, *warmup_errors, *unsent,
         *busy_machine, *page_errors, *gems_differ, *InstructionsFlags.new(@config, @options).to_a]
      end

      private

      def failed
        bad = all_trials.reject(&:ok?)
        return [] if bad.empty?

        reason = bad.first.reason.to_s.lines.first.to_s.strip
        [{ "kind" => "failed", "message" => "#{bad.size} failed trial(s); batch #{bad.first.batch}: #{reason}" }]
      end

      # Time and instructions trials alike (a configuration without the
      # split: its trials).
      def all_trials
        @config.respond_to?(:all_trials) ? @config.all_trials : @config.trials
      end

      # Only instructions were measured: their own flags say how many.
      def time?
        !@config.respond_to?(:time?) || @config.time?
      end

      def too_few
        min = @options.min_batches
        return [] if @config.batches >= min || !time?

        [{ "kind" => "too_few_batches",
           "message" => "#{@config.batches} ok batch(es): an interval and a verdict need #{min} " \
                        "(fewer give intervals far narrower than they claim)" }]
      end

      # Fewer than 5 batches give no robust scale: with 3, one of the three
      # deviations from the median is 0 and the MAD is the smaller of the
      # other two, so a batch 2% off two near-equal ones reads as z = -30.
      MIN_BATCHES_FOR_OUTLIERS = 5

      def outliers
        values = @config.rps_values
        return [] if values.size < MIN_BATCHES_FOR_OUTLIERS

        z = Stats.robust_z(values)
        Stats.outliers(values, threshold: @options.outlier_z).map do |i|
          batch = @config.batch_numbers[i]
          { "kind" => "outlier", "batch" => batch,
            "message" => format("batch %d: %s %s, robust z %+.1f", batch, Units.rate(values[i]), @unit, z[i]) }
        end
      end

      def high_variance
        cv = @config.summary.cv
        return [] unless cv && cv > @options.high_cv

        [{ "kind" => "high_variance",
           "message" => "CV #{Units.percent(cv, digits: 1)} > #{Units.percent(@options.high_cv, digits: 1)}" }]
      end

      def warmup
        @config.ok_trials.filter_map do |trial|
          trend = Stats.trend(trial.requests_per_second)
          next unless trend.rising

          { "kind" => "warmup_too_short", "batch" => trial.batch,
            "message" => "batch #{trial.batch}: throughput rose #{Units.percent(trend.relative_rise, digits: 1)} " \
                         "during the measured window; lengthen the warmup" }
        end
      end

      def warmup_errors
        @config.ok_trials.filter_map do |trial|
          warmup = trial.warmup
          next unless warmup && warmup["failed"].positive?

          kinds = warmup["status"].reject { |code, _| code.to_i.between?(200, 399) }
                                  .merge(warmup["errors"].select { |_, n| n.to_i.positive? })
          { "kind" => "warmup_errors", "batch" => trial.batch,
            "message" => format("batch %d: %d of %d warmup requests failed (%s): %s; the window may not measure " \
                                "what you meant", trial.batch, warmup["failed"],
                                warmup["requests"] + warmup["errors"].values.sum,
                                kinds.map { |k, n| "#{k}: #{n}" }.join(", "),
                                TrialCauses.warmup_errors_cause(trial, warmup)) }
        end
      end

      # Slots the server never answered in the window: only some of the
      # connections named were measured.
      def unserved
        @config.ok_trials.filter_map do |trial|
          counts = TrialCauses.unserved(trial)
          next unless counts

          what = counts["kind"] == "streams" ? "stream slots" : "connections"
          served = counts["served"].to_i
          { "kind" => "unserved_connections", "batch" => trial.batch,
            "message" => format("batch %d: only %d of %d %s %s served in the window (the longest wait %s): %s",
                                trial.batch, served, counts["active"].to_i, what, served == 1 ? "was" : "were",
                                Units.seconds(counts["max_wait_us"].to_f / 1e6, digits: 1),
                                TrialCauses.unserved_cause(trial, counts)) }
        end
      end

      def unsent
        @config.ok_trials.filter_map do |trial|
          late = trial.engine["late"]
          count = late.is_a?(Hash) ? late["unsent"].to_i : 0
          next unless count.positive?

          { "kind" => "unsent_requests", "batch" => trial.batch,
            "message" => format("batch %d: %d of %d requests scheduled in the window were never sent " \
                                "(every connection was waiting on the server)", trial.batch, count,
                                late["scheduled"].to_i) }
        end
      end

      def busy_machine
        @config.ok_trials.filter_map do |trial|
          machine = trial.machine
          next unless machine.is_a?(Hash) && machine["busy"]

          busiest = Array(machine["busiest"]).map { |p| "#{p["name"]} (pid #{p["pid"]}) #{p["cpu_percent"]}%" }
          { "kind" => "busy_machine", "batch" => trial.batch,
            "message" => format("batch %d: other processes used %.0f%% of a CPU during the window: %s",
                                trial.batch, machine["other_cpu_percent"].to_f, busiest.join(", ")) }
        end
      end

      def page_errors
        limit = @config.max_error_rate
        Array(@config.entries).filter_map do |entry|
          measured = entry.error_rate.to_f > limit
          warmup = entry.warmup
          in_warmup = warmup && warmup["failed"].positive?
          next unless measured || in_warmup

          parts = []
          if measured
            parts << format("%d of %d requests failed (%s, limit %s)", entry.failed, entry.attempts,
                            EntryText.failures(entry.status, entry.errors), Units.percent_trimmed(limit))
          end
          if in_warmup
            parts << format("%d of %d warmup requests failed (%s)", warmup["failed"],
                            warmup["requests"] + warmup["errors"].values.sum,
                            EntryText.failures(warmup["status"], warmup["errors"]))
          end
          { "kind" => "page_errors", "entry" => entry.label, "message" => "page #{entry.label}: #{parts.join("; ")}" }
        end
      end

      def gems_differ
        flags = []
        base = @config.baseline_config
        if base && !base.equal?(@config) && !GemDifferences.explained?(base.dims, @config.dims)
          differences = GemDifferences.between(@config.gems, base.gems)
          unless differences.empty?
            flags << { "kind" => "gems_differ", "gems" => differences.map(&:first),
                       "message" => "its servers loaded other gems than the baseline's (#{base.label}), and no gem " \
                                    "is a dimension here: #{GemDifferences.text(differences, b_name: "baseline")}" }
          end
        end
        @config.batches_with_other_gems.each do |batch, differences|
          flags << { "kind" => "gems_differ", "batch" => batch, "gems" => differences.map(&:first),
                     "message" => "batch #{batch} loaded other gems than the configuration's first: " \
                                  "#{GemDifferences.text(differences.map { |n, a, b| [n, b, a] })}" }
        end
        flags
      end

      def saturated
        @config.ok_trials.filter_map do |trial|
          next unless trial.engine.dig("cpu", "saturated")

          { "kind" => "engine_saturated", "batch" => trial.batch,
            "message" => "batch #{trial.batch}: the load engine was " \
                         "#{Units.percent(trial.engine.dig("cpu", "utilization").to_f, digits: 0)} busy; " \
                         "it may have been the bottleneck" }
        end
      end
    end
  end
end
