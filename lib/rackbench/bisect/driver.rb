# frozen_string_literal: true

module Rackbench
  module Bisect
    # Runs a bisection: finds its subject and history, runs the Search
    # over the commits' stored measurements, then confirms every step in
    # one more run that interleaves its two commits batch by batch, and
    # returns the Result. Every run is a step experiment in the results
    # directory: running the same bisection again replays each decision
    # from the store and continues where an interrupted one stopped.
    #
    #   driver = Driver.new(experiment: experiment, settings: settings, steps: Runner::Steps.new(...),
    #                       store: "rackbench-results", results_dir: "rackbench-results")
    #   result = driver.run
    class Driver
      # A step's confirmation run: its experiment's name, the verdict of
      # the gate over it (Search::WORSE: confirmed), its Judgement, and why
      # it could not run (nil when it ran).
      Confirmation = Struct.new(:step, :experiment_name, :verdict, :judgement, :reason, keyword_init: true)

      attr_reader :experiment, :settings, :subject, :history, :derivation, :measurements

      # :experiment :: the user's Experiment
      # :settings :: Settings
      # :steps :: Runner::Steps (or a fake with #run, #stored, #runner)
      # :store :: the results database, as Store.open takes it
      # :results_dir :: where the runs' logs, the app's worktrees and the build journal go
      # :on_build :: called with (index) before a commit's ruby is built
      # :on_measure :: called with (index, batches) before a commit's batches run
      # :on_skip :: called with (index, reason) once for each commit that cannot be measured
      # :on_ends :: called with the ends' verdict (Search::WORSE: the bisection goes on)
      # :on_split :: called with (from, split, to, left, right) after each split is judged
      # :on_confirm :: called with (step, batches) before a confirmation's batches run
      # :parse_options :: for Experiment#derive (known_servers:, known_apps:)
      def initialize(experiment:, settings:, steps:, store:, results_dir:, on_build: nil, on_measure: nil, on_skip: nil,
                     on_ends: nil, on_split: nil, on_confirm: nil, parse_options: {})
        @experiment = experiment
        @settings = settings
        @steps = steps
        @store = store
        @on_ends = on_ends
        @on_split = on_split
        @on_confirm = on_confirm
        @subject = Subject.find(experiment, over: Settings.over_parts(settings.over))
        git = Git.new(@subject.repository)
        @history = History.between(git, good: settings.good, bad: settings.bad)
        if @subject.app?
          @worktrees = Worktrees.new(git: git, root: File.join(results_dir, "bisect-worktrees", experiment.name))
        end
        @derivation = Derivation.new(experiment: experiment, subject: @subject, settings: settings,
                                     app_dir: ->(sha) { app_dir(sha) }, parse_options: parse_options)
        @judge = Judge.new(settings)
        @measurements = Measurements.new(history: @history, derivation: @derivation, steps: steps, store: store,
                                         judge: @judge, journal: Journal.new(results_dir), settings: settings,
                                         on_build: on_build, on_measure: on_measure, on_skip: on_skip)
      end

      # Whether the store holds a run of this bisection's good commit
      # already (a bisection to --resume). Asked by name: nothing is
      # built to know it.
      def started?
        !stored_good.nil?
      end

      # The good commit's stored trials (the pilot of Cost), [] when none
      # is stored yet.
      def pilot
        good = stored_good
        good ? Store.open(@store) { |store| store.trials(good[:id], result: false) } : []
      end

      # Runs (or replays) the search and the confirmations; returns the
      # Result. The app's worktrees are removed once it is done, and kept
      # when it is interrupted (Ctrl-C passes through as Interrupted).
      def run
        outcome = Search.new(size: @history.size, settings: @settings, oracle: @measurements, on_ends: @on_ends,
                             on_split: @on_split).run
        confirmations = outcome.status == Search::FOUND ? outcome.steps.map { |step| confirm(step) } : []
        result = Result.new(driver: self, outcome: outcome, confirmations: confirmations)
        result.to_h # every figure read while the worktrees are there
        @worktrees&.remove_all
        result
      end

      # The Judgement of the history's ends: bad against good at the threshold.
      def ends_judgement
        @measurements.judgement(0, @history.size - 1, @settings.threshold)
      end

      private

      # The latest stored experiment of the good commit's run, or nil.
      def stored_good
        directory = Store::Connection.scheme(@store.to_s) == :directory
        return nil if directory && !File.exist?(File.join(@store, Store::Connection::DB_FILE))

        name = @derivation.commit_name(@history.good.sha)
        Store.open(@store) { |store| store.latest_experiment(name: name) }
      end

      # The app's directory at commit +sha+: its worktree, and the app's
      # place in the repository.
      def app_dir(sha)
        tree = @worktrees.checkout(sha)
        @subject.subdir.empty? ? tree : File.join(tree, @subject.subdir)
      end

      # The step's two commits in one run, batches added while the gate
      # cannot say, up to the most. A failed trial, or a run that cannot
      # start, leaves the step unconfirmed, with the reason.
      def confirm(step)
        from = @history[step.from]
        experiment = @derivation.confirm_experiment(from.sha, @history[step.to].sha)
        confirmation = ->(**fields) { Confirmation.new(step: step, experiment_name: experiment.name, **fields) }
        (@settings.min_batches..@settings.max_batches).each do |batches|
          @on_confirm&.call(step, batches)
          outcome = @steps.run(experiment, through_batch: batches, fail_fast: true)
          report = Store.open(@store) do |store|
            Report.new(store, experiment_id: outcome.experiment_id, **@settings.report_options)
          end
          judgement = @judge.within(report, *@derivation.confirm_pairs(from.sha, @history[step.to].sha), @settings.min_step)
          next if judgement.verdict == Search::UNSURE && batches < @settings.max_batches

          return confirmation.call(verdict: judgement.verdict, judgement: judgement)
        end
      rescue Interrupted, UsageError
        raise
      rescue Error => e
        stored = experiment && @steps.stored(experiment)
        reason = (stored && Measurements.failure(stored.records)) || e.message.lines.first.to_s.strip
        Confirmation.new(step: step, experiment_name: experiment&.name, verdict: Search::UNSURE, reason: reason)
      end
    end
  end
end
