# frozen_string_literal: true

module Rackbench
  module Fleet
    # What a worker checks of a queued experiment before it claims any of
    # its batches, on its own host: the experiment's file, as stored, reads
    # to the same experiment here (the same fingerprint: the same plan,
    # batch by batch), its apps' paths and request lists exist here, its
    # rubies resolve here, the variables it passes from the shell are set,
    # and what it would run is at the revisions the experiment was queued
    # with (its labels). Any failure is one line, and the worker leaves the experiment's
    # batches to the other workers of its testbed.
    class ExperimentCheck
      # What a passing check gives the worker: the experiment as it will
      # run it.
      # (its --label pairs, and its stored row, whose labels the worker's
      # runner proves).
      Passed = Struct.new(:experiment, :labels, :row, keyword_init: true)
      # A failing check's one-line reason.
      Refused = Struct.new(:reason, keyword_init: true)

      # :runner :: called with an Experiment and its labels:, returns the
      #            Runner the worker would run it with (its plan resolves the
      #            rubies)
      def initialize(runner:)
        @runner = runner
      end

      # row :: the experiment's row (Store#experiment); document :: the
      # queue's "base_dir" and "source" for it. Returns Passed or Refused.
      def call(row, document)
        experiment = parse(row, document)
        # The source's own fingerprint (the row's adds the labels).
        queued = document.fetch("fingerprint", row[:fingerprint])
        if experiment.fingerprint != queued
          return Refused.new(reason: "its file reads as another experiment here (fingerprint " \
                                     "#{experiment.fingerprint[0, 12]}, stored #{queued[0, 12]}): run the " \
                                     "rackbench version that queued it (#{row[:rackbench_version]})")
        end
        labels = document.fetch("labels", {})
        runner = @runner.call(experiment, labels: labels)
        runner.plan # resolves the rubies: a ruby this host lacks is a ConfigError
        runner.kind.check!
        runner.check_queued!(row) # the app's checkout here at the revision it was queued at
        Passed.new(experiment: experiment, labels: labels, row: row)
      rescue ConfigError, SetupError, UsageError => e
        Refused.new(reason: e.message.lines.first.to_s.strip)
      end

      private

      # The file's text as stored, its relative paths resolved where the
      # submitter's file was, with the seed and batches the submitter ran
      # (run --seed, --batches).
      def parse(row, document)
        experiment = Experiment.parse(row[:source_text].to_s, source: document.fetch("source", "#{row[:name]}.yml"),
                                                              base_dir: document.fetch("base_dir", Dir.pwd))
        return experiment if experiment.seed == row[:seed] && experiment.batches == row[:batches]

        experiment.with(seed: row[:seed], batches: row[:batches])
      end
    end
  end
end
