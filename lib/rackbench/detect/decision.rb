# frozen_string_literal: true

module Rackbench
  module Detect
    # How many batches a --detect run takes, decided from its pilot: for
    # each configuration compared with its baseline (the report's: the
    # first configuration, or the --baseline spec), the batches that detect
    # the asked difference at the pilot's noise (Stats.batches_needed, at
    # the settings' confidence and power, of Stats.planning_cv: the pooled
    # CV, batches far out of line left out, raised to its 65% upper
    # confidence limit, so that a pilot of 5
    # batches delivers the power asked on average); the largest of them, at
    # least the pilot, then capped by --max-batches and by the batches that
    # fit the time budget.
    #
    # Computed from the pilot's stored trials only, so that a resumed run
    # decides the same.
    class Decision
      # One comparison of the pilot: +label+ and +baseline+ (configuration
      # labels), its planning +cv+ (Stats.planning_cv; nil when a side has
      # fewer than 2 ok batches) and the batches it +needs+ (nil with the cv).
      Need = Struct.new(:label, :baseline, :cv, :needs, keyword_init: true)

      # Where the cap came from, when one applied.
      MAX_BATCHES = "--max-batches"
      TIME_BUDGET = "the time budget"
      # The ok batches a side the report needs for an interval and a
      # verdict (Report::Options' min_batches default).
      VERDICT_BATCHES = 5

      attr_reader :settings, :needs, :pilot_cvs, :budget_batches

      # pilot_configs :: the pilot's Report::ConfigSummary list, baselines applied (Report#configs of a
      #                  report through the pilot's last batch)
      # settings :: Detect::Settings
      # :budget_batches :: batches that fit the time budget (Stopping computes it), or nil for no budget
      def initialize(pilot_configs, settings, budget_batches: nil)
        @settings = settings
        @budget_batches = budget_batches
        @pilot_cvs = pilot_configs.to_h { |c| [c.label, Stats.summary(settings.values(c)).cv] }
        @needs = pilot_configs.filter_map do |config|
          base = config.baseline_config
          next if base.nil? || base.equal?(config)

          cv = Stats.planning_cv(settings.values(base), settings.values(config))
          needs = cv && Stats.batches_needed(cv: cv, detect: settings.effect, confidence: settings.confidence,
                                             power: settings.power)
          Need.new(label: config.label, baseline: base.label, cv: cv, needs: needs)
        end
        freeze
      end

      # The batches the comparisons need (the largest), or nil when no
      # comparison could be measured (a side without 2 ok pilot batches,
      # or one configuration only).
      def needed
        known = @needs.map(&:needs)
        known.empty? || known.include?(nil) ? nil : known.max
      end

      # The batches the run takes, pilot included: what is needed (the
      # whole plan when unknown), at least the pilot and the least the
      # report gives a verdict on (VERDICT_BATCHES), at most the cap.
      def batches
        [wanted, cap_batches].min
      end

      # What capped the run (MAX_BATCHES or TIME_BUDGET), or nil when it runs what was needed.
      def cap
        return nil if wanted <= cap_batches

        @budget_batches && @budget_batches < settings.max_batches ? TIME_BUDGET : MAX_BATCHES
      end

      # The lines the run prints once the pilot is in.
      def lines
        pilot = settings.pilot_batches
        out = ["pilot of #{pilot} batches done; CV of #{settings.measure_text.split(",").first}: " +
               @pilot_cvs.map { |label, cv| "#{label} #{cv ? Detect.percent(cv.round(4)) : "unknown"}" }.join(", ")]
        @needs.each do |need|
          what = if need.needs
                   "needs #{need.needs} batches (planned at a CV of #{Detect.percent(need.cv.round(4))}: " \
                     "the pooled CV's 65% upper limit, batches far out of line left out)"
                 else
                   "CV unknown (fewer than 2 ok batches)"
                 end
          out << "#{need.label} against #{need.baseline}: #{what}"
        end
        out << summary_line
      end

      private

      # Why a floor beside the pilot's: a pilot of 3 batches whose noise
      # needs 3 ended a run (a 0.5% change in instructions, 2026-12-03)
      # where the report, which wants VERDICT_BATCHES a side for an
      # interval, could give no verdict ("too few batches").
      def wanted
        [needed || settings.max_batches, settings.pilot_batches, VERDICT_BATCHES].max
      end

      def cap_batches
        [settings.max_batches, @budget_batches].compact.min
      end

      def summary_line
        effect = Detect.percent(settings.effect)
        head = if needed then "to detect #{effect}: #{needed} batches needed"
               elsif @needs.empty? then "no comparison to decide on (one configuration)"
               else "no batches-needed estimate (a configuration lacks 2 ok pilot batches)"
               end
        tail = case cap
               when MAX_BATCHES then "; capped by --max-batches #{settings.max_batches}"
               when TIME_BUDGET then "; capped by the time budget: #{@budget_batches} batches fit"
               else ""
               end
        "#{head}#{tail}: running #{batches} batches in all"
      end
    end
  end
end
