# frozen_string_literal: true

module Rackbench
  module Bisect
    # What a bisection will take, said before it starts (and all that
    # --dry-run says): the commits, the commits it will likely measure
    # (the two ends, about log2 N splits, and a confirmation run of two
    # commits per step), the time per build from the build cache's
    # timings of the last build on this machine (a ruby's), and the time
    # per trial from the good commit's stored trials once it is measured
    # (the pilot), else from the plan's guess.
    class Cost
      # A step's overhead besides its trials: a run's start (its rubies,
      # gems and machine checked), seconds.
      RUN_OVERHEAD_S = 10.0

      attr_reader :commits, :splits, :trials_per_batch

      # :history :: History
      # :settings :: Settings
      # :subject :: Subject
      # :experiment :: the user's Experiment
      # :pilot :: Trial::Records of the good commit, when stored (default: [])
      # :build_s :: how long a build took here last (Rubies::Build::Timings), or nil
      def initialize(history:, settings:, subject:, experiment:, pilot: [], build_s: nil)
        @history = history
        @settings = settings
        @subject = subject
        @experiment = experiment
        @pilot = pilot.select(&:ok?)
        @build_s = subject.ruby? ? build_s : nil
        @commits = history.size - 1
        between = history.size - 2
        @splits = between.positive? ? Math.log2(between + 1).ceil : 0
        @configs = experiment.configurations.select { |c| c.dims[subject.kind] == subject.name }
        @trials_per_batch = [@configs.size, 1].max
      end

      # Commits measured, ends included (a skipped commit adds one).
      def measured = 2 + @splits

      # Seconds one trial takes: the pilot's mean, else the plan's guess.
      def trial_s
        return @pilot.sum { |r| r.wall_s.to_f } / @pilot.size unless @pilot.empty?

        guesses = @configs.map do |config|
          config.estimated_s * (@settings.figure.instructions ? Experiment::Plan::INSTRUCTIONS_SLOWDOWN : 1)
        end
        guesses.empty? ? Experiment::Config::OVERHEAD_S : guesses.sum / guesses.size
      end

      # Seconds the whole bisection takes, roughly.
      def total_s
        measured * per_commit_s + confirmation_s
      end

      # Seconds what follows the two ends takes: the splits and a confirmation.
      def remaining_s
        @splits * per_commit_s + confirmation_s
      end

      # The lines said before the bisection starts.
      def lines
        good = @history.good
        bad = @history.bad
        [
          "Bisect #{@experiment.name}: #{@subject.describe}, #{@commits} commits from #{good.short} (good: " \
          "#{Terminal.truncate(good.subject)}) to #{bad.short} (bad: #{Terminal.truncate(bad.subject)})",
          "  #{@settings.describe}",
          "  about #{measured} commits measured (the 2 ends and about log2 #{@commits} = #{@splits} between) and " \
          "a confirmation run of 2 commits per step found: #{builds_text}#{@settings.min_batches} batches of " \
          "#{count(@trials_per_batch, "trial")} per commit, #{trial_text}; about #{duration(total_s)} in all"
        ]
      end

      private

      def per_commit_s
        (@build_s || 0.0) + RUN_OVERHEAD_S + @settings.min_batches * @trials_per_batch * trial_s
      end

      def confirmation_s
        RUN_OVERHEAD_S + 2 * @settings.min_batches * @trials_per_batch * trial_s
      end

      def builds_text
        return "" unless @subject.ruby?

        each = @build_s ? "about #{duration(@build_s)} each: the last build here; ccache makes a rebuild of a few " \
                          "changed files shorter" : "no build timed here yet"
        "#{count(measured, "build")} (#{each}), "
      end

      def trial_text
        if @pilot.empty?
          "about #{duration(trial_s)} a trial (guessed; the good commit's trials will tell)"
        else
          "about #{duration(trial_s)} a trial (the good commit's #{count(@pilot.size, "trial")})"
        end
      end

      def count(n, noun)
        "#{n} #{noun}#{"s" unless n == 1}"
      end

      def duration(seconds)
        Experiment::Plan.format_duration(seconds)
      end
    end
  end
end
