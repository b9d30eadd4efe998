# frozen_string_literal: true

module Rackbench
  module Fleet
    # `rackbench run FILE --fleet URL`: stores the experiment as a local run
    # would (Runner::StoredExperiment: the same name, fingerprint, labels,
    # seed, configurations and machine description), queues its batches for
    # a testbed, and follows them
    # (Follow) until every batch is done, unless detached. Each worker
    # plans the experiment again from its stored file and seed, so every
    # host runs each batch in the same seeded order; nothing but the batch
    # numbers goes through the queue, with what each worker must prove it
    # runs: the source's fingerprint and the --label pairs (the stored
    # labels also hold the revisions of the apps given by path, which each
    # worker's checkout must have).
    #
    # With resume, an experiment already stored is followed again, its
    # missing batches queued; with retry_failed, its done batches holding a
    # failed trial are queued again, to run whole on one host.
    class Submit
      # :store :: the database URL (PostgreSQL: what every host reaches)
      # :testbed :: the testbed whose workers run it (default: "default")
      # :resume, :retry_failed, :detach :: see the class
      # :out, :err :: progress and warnings
      # :follow :: keywords for Follow (poll_s:, dead_after_s:) (default: {})
      # :labels :: the --label pairs (Hash) (default: {})
      # :git :: reads an app's revision (default: Labels::GitRevision; tests pass a fake)
      def initialize(experiment, store:, testbed: DEFAULT_TESTBED, resume: false, retry_failed: false, detach: false,
                     out: $stdout, err: $stderr, follow: {}, labels: {}, git: Labels::GitRevision)
        @experiment = experiment
        # The rubies are resolved (and built) by each worker: their
        # revisions join the stored labels there (StoredExperiment#claim).
        @labels = Labels.capture(given: labels, source: experiment, variants: {}, git: git)
        @store_url = store
        @testbed = testbed
        @resume = resume
        @retry_failed = retry_failed
        @detach = detach
        @out = out
        @err = err
        @follow = follow
      end

      # Queues and (unless detached) follows; returns the Runner::Summary of
      # the stored experiment (nil when detached).
      def run
        Store.open(@store_url) do |store|
          unless store.postgres?
            raise UsageError, "--fleet needs a PostgreSQL database that every host reaches " \
                              "(postgres://USER@HOST/DATABASE), not #{store.location}"
          end
          id = store_experiment(store)
          queue_batches(store, id)
          return nil if @detach

          Follow.new(store, id, testbed: @testbed, out: @out, **@follow).run
        end
      rescue Sequel::Error => e
        raise Store::Error, "lost #{Store::Connection.redact(@store_url)}: #{Store::Connection.reason(e)}"
      end

      private

      def store_experiment(store)
        environment = Runner.capture_machine(err: @err).merge("fleet" => { "testbed" => @testbed })
        Runner::StoredExperiment.new(source: @experiment, labels: @labels, environment: environment,
                                     config_keys: @experiment.configurations.map(&:key)).find_or_create(store)
      end

      def queue_batches(store, id)
        queue = Queue.new(store)
        held = queue.batches(id)
        stored = store.finished_keys(id)
        if !@resume && !(held.empty? && stored.empty?)
          raise UsageError, "#{store.location} already holds experiment '#{@experiment.name}' (#{stored.size} trials, " \
                            "#{held.size} batches queued): add --resume to follow it, or rename it"
        end
        fresh = queue.enqueue(id, batches: @experiment.batches, testbed: @testbed,
                                  document: { "base_dir" => @experiment.base_dir, "source" => @experiment.source,
                                              "fingerprint" => @experiment.fingerprint, "labels" => @labels.given })
        again = @retry_failed ? queue.requeue_failed(id) : []
        announce(store, id, fresh, again, held)
      end

      def announce(store, id, fresh, again, held)
        configs = @experiment.configurations.size
        line = "Experiment #{@experiment.name} (id #{id}): #{@experiment.batches} batches of #{configs} " \
               "configurations for testbed #{@testbed} in #{store.location}"
        parts = []
        parts << "#{fresh.size} queued" unless fresh.empty?
        parts << "#{again.size} with failed trials queued again (#{again.join(", ")})" unless again.empty?
        parts << "#{held.size} queued before" unless held.empty?
        @out.puts "#{line}: #{parts.join(", ")}"
        return unless @detach

        @out.puts "Detached: start `rackbench worker #{store.location} --testbed #{@testbed}` on each host; " \
                  "follow with the same run command and --resume"
      end
    end
  end
end
