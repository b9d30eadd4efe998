# frozen_string_literal: true

module Rackbench
  class Runner
    # How long the trials still to run will take, learnt from the trials
    # that ran. What a plan cannot know is the server's boot and stop: 3 s
    # for Rack hello world, 5 to 35 s for a real Rails app. So a trial's
    # estimate is its configuration's measured part (warmup + window, which
    # the plan knows) plus the boot and stop measured for the same ruby,
    # server and app (boot_s + stop_s + the identity check's check_s + the
    # app's reset, if it has one, of its stored records), else the mean of the run's other configurations,
    # else the plan's fixed allowance (Experiment::Config::OVERHEAD_S). On
    # --resume it learns from the trials already stored.
    #
    # A kind whose records have no boot_s (a micro-benchmark's script) is
    # never learnt from: its plan estimate stands.
    #
    # Instructions trials (under valgrind) boot, stop and serve at another
    # speed: they are learnt apart from time trials. A window of a fixed
    # count lasts what its requests take, which only a run knows: the
    # warmup and window measured for the same configuration and measure
    # replace the plan's guess.
    class Estimate
      # What an estimate is based on, from the surest: every trial's own
      # ruby/server/app measured; some only from other configurations;
      # some from nothing measured at all (the plan's guess).
      BASES = %i[measured run plan].freeze

      # seconds :: the estimate; basis :: one of BASES, the least sure of its
      # parts; note :: what it rests on when it is a guess, for a progress
      # line (nil when it rests on the trials' own configurations)
      Guess = Struct.new(:seconds, :basis, :note) do
        def guess? = basis != :measured
      end

      # :plan_overhead_s :: what the plan's estimate of a trial allows for boot and stop
      #                     (default: Experiment::Config::OVERHEAD_S)
      # :plan_note :: how the plan estimates a trial (the source's estimate_note, e.g.
      #               "warmup + duration + ~3s per trial") (default: "the plan's estimate")
      def initialize(plan_overhead_s: Experiment::Config::OVERHEAD_S, plan_note: "the plan's estimate")
        @plan_overhead_s = plan_overhead_s
        @notes = { measured: nil, run: "guessed from other configurations' boot and stop",
                   plan: "guessed: #{plan_note}" }
        @by_group = Hash.new { |hash, key| hash[key] = [] }
        @windows = Hash.new { |hash, key| hash[key] = [] }
      end

      # Learns a finished trial's boot and stop (a Trial::Record); a record
      # without a boot (it failed before its server was ready, or it is a
      # script) teaches nothing. Returns self.
      def learn(record)
        return self if record.boot_s.nil?

        identity = record.identity.is_a?(Hash) ? record.identity : {}
        # The app's reset runs before every trial; its setup once, so it is left out.
        extra_s = identity["check_s"].to_f + identity.dig("hooks", "reset", "duration_s").to_f
        measure = Instructions.trial?(record) ? Instructions::INSTRUCTIONS : Instructions::TIME
        @by_group[[record.ruby, record.server, record.app, measure]] << record.boot_s + record.stop_s.to_f + extra_s
        learn_window(record, measure)
        self
      end

      # A Guess of one plan trial (Experiment::Plan::Trial).
      def trial(trial)
        planned_s = planned_s(trial)
        dims = trial.config.dims
        measured = @by_group.fetch([dims["ruby"], dims["server"], dims["app"], measure_of(trial)], nil)
        return guess(planned_s - @plan_overhead_s + mean(measured), :measured) if measured

        all = @by_group.values.flatten
        return guess(planned_s - @plan_overhead_s + mean(all), :run) unless all.empty?

        guess(planned_s, :plan)
      end

      # A Guess of trials (the sum; the basis the least sure of theirs).
      # For none: 0 s, measured. A configuration whose timeout is left to
      # calibration and whose first batch is still to run also pays the
      # calibration: one more boot and stop on a server of its own
      # (Trial::Http#calibrate_first) and its short run.
      def remaining(trials)
        guesses = trials.map { |t| trial(t) } + calibrations(trials)
        basis = guesses.map { |g| BASES.index(g.basis) }.max
        guess(guesses.sum(&:seconds), basis ? BASES[basis] : :measured)
      end

      private

      # A window of a fixed count (load_settings "count"): its warmup and
      # window as they ran, for its configuration and measure.
      def learn_window(record, measure)
        settings = record.load_settings
        return unless settings.is_a?(Hash) && settings["count"] && record.ok? && record.measure_s

        @windows[[record.dims, measure]] << record.warmup_s.to_f + record.measure_s.to_f
      end

      def measure_of(trial)
        trial.respond_to?(:instructions?) && trial.instructions? ? Instructions::INSTRUCTIONS : Instructions::TIME
      end

      # The plan's estimate of +trial+, its count's window as measured when
      # the run has measured it.
      def planned_s(trial)
        planned = trial.respond_to?(:estimated_s) ? trial.estimated_s : trial.config.estimated_s
        windows = @windows.fetch([trial.config.dims, measure_of(trial)], nil)
        return planned unless windows

        @plan_overhead_s + mean(windows)
      end

      # The calibration's run: its warmup and window, and the engine's
      # start and end around them.
      CALIBRATION_RUN_S = Trial::Http::Calibration::WARMUP_S + Trial::Http::Calibration::WINDOW_S + 0.5
      private_constant :CALIBRATION_RUN_S

      def calibrations(trials)
        # A micro-benchmark's configurations have no load: nothing to calibrate.
        calibrated = trials.select do |t|
          t.batch == 1 && t.config.respond_to?(:calibrated_timeout?) && t.config.calibrated_timeout?
        end
        calibrated.map do |t|
          whole = trial(t)
          # The trial's estimate less its warmup and window: its boot and stop.
          boot_and_stop_s = whole.seconds - (planned_s(t) - @plan_overhead_s)
          guess(boot_and_stop_s + CALIBRATION_RUN_S, whole.basis)
        end
      end

      def guess(seconds, basis)
        Guess.new(seconds, basis, @notes.fetch(basis))
      end

      def mean(values)
        values.sum / values.size
      end
    end
  end
end
