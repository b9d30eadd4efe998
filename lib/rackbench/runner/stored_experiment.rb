# frozen_string_literal: true

module Rackbench
  class Runner
    # The one place an experiment's row is made: by a local run, and by
    # `run --fleet` before its batches are queued. It is stored under the
    # fingerprint of its source with its labels (Labels#fingerprint: the
    # --label pairs and the revisions of what it ran), so that another
    # revision or other labels make another experiment and a resumed run
    # finds its own; the labels themselves go with it.
    #
    # A fleet's worker makes none: it runs the claimed batch into the row
    # the submitter stored (#claim), after proving that what it would run
    # here is what the row names (the same labels and app revisions; a
    # ruby built from a git commit adds its revision, which only a host
    # that resolved the ruby knows).
    class StoredExperiment
      # :source :: the Experiment (or another source of trials)
      # :labels :: the run's Labels
      # :environment :: the machine's description stored with it
      # :config_keys :: its configurations' keys
      def initialize(source:, labels:, environment:, config_keys:)
        @source = source
        @labels = labels
        @environment = environment
        @config_keys = config_keys
      end

      def fingerprint
        @labels.fingerprint(@source.fingerprint)
      end

      # The id of the experiment's row in store, made when it is not there.
      def find_or_create(store)
        store.find_or_create_experiment(name: @source.name, fingerprint: fingerprint, seed: @source.seed,
                                        batches: @source.batches, source_text: @source.source_text,
                                        environment: @environment, config_keys: @config_keys, labels: @labels.to_h)
      end

      # A worker's check of the row it was queued (Store#experiment) against
      # the labels it runs with here; returns the row's id. The row keeps
      # the revisions of rubies it did not name yet (the submitter does not
      # build rubies). Raises SetupError naming what differs: a batch of it
      # run here would measure another revision than its other batches.
      def claim(store, row)
        check!(row)
        stored = Labels.from_h(row[:labels])
        added = @labels.revisions.reject { |r| stored.revision(r["of"], r["name"]) }
        store.add_experiment_revisions(row[:id], added) unless added.empty?
        row[:id]
      end

      # Raises SetupError when the labels here differ from those the row
      # was queued with (a worker's check before it claims any batch).
      def check!(row)
        differences = differences(Labels.from_h(row[:labels]))
        return if differences.empty?

        raise SetupError, "this host would run another revision than experiment #{row[:name]} (id #{row[:id]}) " \
                          "was queued with: #{differences.join("; ")}"
      end

      private

      # What the stored labels name that these do not, or name otherwise.
      def differences(stored)
        given = (stored.given.keys | @labels.given.keys).reject { |k| stored.given[k] == @labels.given[k] }
                                                       .map { |k| "label #{k}: #{@labels.given[k] || "(none)"} here, " \
                                                                  "#{stored.given[k] || "(none)"} queued" }
        revisions = stored.revisions.filter_map do |queued|
          here = @labels.revision(queued["of"], queued["name"])
          next nil if here && same_revision?(here, queued)

          "#{queued["of"]} #{queued["name"]}: #{here ? Labels.short(here) : "no revision"} here, " \
            "#{Labels.short(queued)} queued"
        end
        given + revisions
      end

      def same_revision?(one, other)
        one.slice("commit", "diff_digest", "patches") == other.slice("commit", "diff_digest", "patches")
      end
    end
  end
end
