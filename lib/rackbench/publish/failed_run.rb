# frozen_string_literal: true

module Rackbench
  module Publish
    # A run that could not start, recorded so that the timeline shows it
    # (`rackbench record-failure`): a nightly whose ruby did not build has
    # no trial, and hiding the night would hide the commit that broke the
    # build. The experiment is stored as `rackbench run` would store it
    # (its name, its fingerprint with the labels: the --label pairs, the
    # revision of each app given by path and the commit each `build:` ref
    # names now), on this machine, with one run "failed" whose environment
    # says why ("failure": stage, reason, log). Publish draws it as a
    # failed run (a red cross) and its points as missing. The same night
    # run later with --resume is the same experiment and fills it.
    module FailedRun
      module_function

      # Returns the experiment id. +path+: the experiment file; +given+:
      # the --label pairs; +reason+: one line; +log+: the failure's log
      # (default: nil); +stage+: what failed (default: "build").
      def record(store, path, given:, reason:, log: nil, stage: "build", environment: MachineEnv.capture)
        experiment = Experiment.load(path)
        variants = experiment.rubies.select(&:build).to_h { |r| [r.label, BuiltRuby.new(r.build.to_h, nil)] }
        labels = Labels.capture(given: given, source: experiment, variants: variants)
        id = store.find_or_create_experiment(name: experiment.name, fingerprint: labels.fingerprint(experiment.fingerprint),
                                             seed: experiment.seed, batches: experiment.batches,
                                             source_text: experiment.source_text, environment: environment,
                                             labels: labels.to_h)
        failure = { "stage" => stage, "reason" => reason, "log" => log && File.expand_path(log) }.compact
        run = store.start_run(id, resumed: false, environment: environment.to_h.transform_keys(&:to_s).merge("failure" => failure))
        store.finish_run(run, "failed")
        id
      end

      # What Labels.ruby_revision reads of a ruby built from source: its
      # recipe (Rubies::Build::Recipe#to_h), before any install.
      BuiltRuby = Struct.new(:recipe, :install)
    end
  end
end
