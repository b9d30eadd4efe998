# frozen_string_literal: true

module Rackbench
  module Bisect
    # The experiments a bisection runs, each derived from the user's file
    # (Experiment#derive: written out as a file, checked by the same
    # parser, stored and resumed like any run):
    #
    # * one per commit measured, "NAME.bisect.<commit>": the subject at
    #   that commit, under its own name (so that every commit's
    #   configurations are the same configurations, paired by the gate),
    #   its other entries left out, everything else as the file says;
    # * one per step to confirm, "NAME.bisect.confirm.<parent>-<commit>":
    #   the subject at both commits, relabelled with their commits, in one
    #   run whose plan interleaves them batch by batch.
    #
    # Each runs the figure's measure (instructions per request under
    # valgrind, or time), its plan made for the most batches a commit may
    # run (they are run a few at a time: Runner's through_batch), with no
    # capacity, tune or profile section.
    class Derivation
      # The window of an instructions trial when the file has no
      # load.count (an instructions trial needs one): as
      # doc/examples/instructions.yml counts.
      DEFAULT_COUNT = 500

      attr_reader :experiment, :subject, :settings

      # :experiment :: the user's Experiment
      # :subject :: the Subject walked
      # :settings :: Settings
      # :app_dir :: a callable (sha) => the app's directory at that commit
      #             (Worktrees#checkout plus the app's place in the
      #             repository); unused for a ruby
      # :parse_options :: for Experiment#derive (known_servers:, known_apps:)
      def initialize(experiment:, subject:, settings:, app_dir: nil, parse_options: {})
        @experiment = experiment
        @subject = subject
        @settings = settings
        @app_dir = app_dir
        @parse_options = parse_options
        @data = Experiment::YAMLSource.load(experiment.source_text, Experiment::Checker.new(experiment.source))
      end

      # "bench.bisect.1a2b3c4d5e6f"
      def commit_name(sha)
        "#{@experiment.name}.bisect.#{sha[0, 12]}"
      end

      # "bench.bisect.confirm.1a2b3c4d-5e6f7a8b"
      def confirm_name(parent_sha, sha)
        "#{@experiment.name}.bisect.confirm.#{parent_sha[0, 8]}-#{sha[0, 8]}"
      end

      # The experiment that measures commit +sha+. Raises ConfigError when
      # the file does not hold at that commit (an app directory without
      # config.ru), naming the commit.
      def commit_experiment(sha)
        derive(commit_name(sha), [[@subject.name, sha]])
      end

      # The experiment that runs +parent_sha+ and +sha+ side by side; its
      # configurations are paired by #confirm_pairs.
      def confirm_experiment(parent_sha, sha)
        derive(confirm_name(parent_sha, sha), [[@subject.label_at(parent_sha), parent_sha], [@subject.label_at(sha), sha]])
      end

      # What a confirmation run compares: the dimension walked, and the
      # labels of the commit's entries => the parent's ({ "dev-5e6f..." =>
      # "dev-1a2b..." }, a variant of the walked ruby beside it).
      def confirm_pairs(parent_sha, sha)
        [@subject.kind, @subject.paired_labels(@data, parent_sha, sha)]
      end

      private

      def derive(name, labelled)
        checkouts = labelled.map { |label, sha| [label, sha, @subject.app? ? @app_dir.call(sha) : nil] }
        changes = @subject.changes(@data, checkouts).merge(measure_changes)
        changes.merge!("batches" => @settings.max_batches, "capacity" => nil, "tune" => nil, "profile" => nil)
        @experiment.derive(name: name, changes: changes, **@parse_options)
      rescue ConfigError => e
        commits = labelled.map { |_, sha| sha[0, Labels::SHORT_COMMIT] }.join(" and ")
        raise ConfigError, "at #{commits}: #{e.message}"
      end

      # The file's `measure` set to the figure's; an instructions trial's
      # window of a count when the file gives a duration.
      def measure_changes
        changes = { "measure" => @settings.measure }
        load = @data["load"].is_a?(Hash) ? @data["load"] : {}
        if @settings.figure.instructions && load["count"].nil?
          changes.merge!("load.count" => DEFAULT_COUNT, "load.duration" => nil, "load.rate" => nil)
        end
        changes
      end
    end
  end
end
