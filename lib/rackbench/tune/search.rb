# frozen_string_literal: true

module Rackbench
  module Tune
    # The steps of a tuning, each an ordinary derived experiment run by
    # Runner::Steps into one results directory, and the decisions between
    # them, replayed from the stored steps (a step already stored runs
    # nothing and gives back its records, so an interrupted tune continues
    # where it stopped):
    #
    # 1. per server, the pilot (MemoryModel): PILOT_PROCESSES processes at
    #    the fewest and at the most candidate threads, one batch each;
    # 2. per server, every candidate processes × threads whose predicted
    #    tree PSS fits the budget, closed loop at its connections
    #    (Settings#connections_for), the tune's batches each.
    #
    # Returns what Analysis needs: per server, the model and every
    # candidate with its records (nil for those left out).
    class Search
      # Processes of the pilot: a master and more than one worker, so both
      # are measured (fewer when no candidate has that many).
      PILOT_PROCESSES = 2

      # One candidate of one server: its counts, its closed loop's
      # connections, the predicted tree PSS, whether it fits the budget,
      # its stored records once run (nil when it was left out or not run
      # yet), and why the server cannot run it (nil when it can: the
      # adapter's own limits, e.g. a server without threads).
      Candidate = Struct.new(:server, :processes, :threads, :connections, :predicted_bytes, :fits, :records,
                             :unsupported, keyword_init: true)
      # One server's part: its ServerSpec, the pilot's records, the
      # MemoryModel (nil when the pilot has not run) and its Candidates.
      ServerPart = Struct.new(:server, :pilot_records, :model, :candidates, keyword_init: true)

      attr_reader :experiment, :settings

      # experiment :: an Experiment with a tune: section
      # :steps :: the Runner::Steps that runs and recalls every step
      def initialize(experiment, steps:)
        @experiment = experiment
        @settings = experiment.tune or raise ConfigError, "#{experiment.source}: no tune: section (doc/experiment.md, \"tune\")"
        @steps = steps
        check!
      end

      # Every step's derived experiment that this tune would run first:
      # the pilots (the candidates follow from their results).
      def pilot_experiments(server)
        processes, threads_list = pilot_shape(server)
        threads_list.map do |threads|
          step(server, "pilot.p#{processes}t#{threads}", processes: processes, threads: threads, batches: 1)
        end
      end

      # The derived experiment of one candidate.
      def candidate_experiment(server, processes, threads)
        step(server, "p#{processes}t#{threads}", processes: processes, threads: threads,
                                                 batches: @settings.batches || @experiment.batches)
      end

      # Whether any step of this tune is stored in the results directory.
      def stored?
        @experiment.servers.any? { |server| pilot_experiments(server).any? { |e| @steps.stored(e) } }
      end

      # Runs (or recalls) every step; returns the ServerParts.
      def run
        @experiment.servers.map { |server| run_server(server) }
      end

      # What is decided without running anything: the ServerParts with the
      # pilots' stored records and the models they give (nil before the
      # pilot has run), and the candidates' stored records.
      def recall
        @experiment.servers.map do |server|
          pilot = pilot_experiments(server).flat_map { |e| @steps.stored(e)&.records || [] }
          model = MemoryModel.from_records(pilot)
          candidates = candidates(server, model)
          candidates.select { |c| c.fits && !c.unsupported }.each do |c|
            c.records = @steps.stored(candidate_experiment(server, c.processes, c.threads))&.records
          end
          ServerPart.new(server: server, pilot_records: pilot, model: model, candidates: candidates)
        end
      end

      private

      def run_server(server)
        pilot = pilot_experiments(server).flat_map { |e| @steps.run(e).records }
        model = MemoryModel.from_records(pilot)
        unless model
          raise Error, "the pilot of #{server.label} gave no per-process PSS: tune needs the counting agent " \
                       "(inside: counting, the default) and an ok pilot trial (see rackbench report --name " \
                       "#{pilot_experiments(server).first.name})"
        end

        candidates = candidates(server, model)
        candidates.select { |c| c.fits && !c.unsupported }.each do |c|
          c.records = @steps.run(candidate_experiment(server, c.processes, c.threads)).records
        end
        ServerPart.new(server: server, pilot_records: pilot, model: model, candidates: candidates)
      end

      def candidates(server, model)
        @settings.candidate_processes.product(@settings.candidate_threads).map do |processes, threads|
          unsupported = unsupported_reason(server, processes, threads)
          predicted = model&.tree_bytes(processes, threads) unless unsupported
          Candidate.new(server: server.label, processes: processes, threads: threads,
                        connections: @settings.connections_for(processes, threads), predicted_bytes: predicted,
                        fits: predicted ? predicted <= @settings.memory_bytes : nil, unsupported: unsupported)
        end
      end

      # The pilot's processes and threads for +server+: PILOT_PROCESSES (or
      # the most candidate processes when fewer), else 1 for a server that
      # cannot fork; at the fewest and the most candidate threads the
      # server supports at that count.
      def pilot_shape(server)
        [[PILOT_PROCESSES, @settings.candidate_processes.max].min, 1].uniq.each do |processes|
          threads = @settings.candidate_threads.select { |t| unsupported_reason(server, processes, t).nil? }
          return [processes, threads.minmax.uniq] unless threads.empty?
        end
        raise ConfigError, "#{@experiment.source}: #{server.label} can run none of the tune's processes × threads " \
                           "(#{unsupported_reason(server, 1, @settings.candidate_threads.min)})"
      end

      # Why the server's adapter cannot run +processes+ × +threads+ on the
      # experiment's ruby, or nil.
      def unsupported_reason(server, processes, threads)
        Servers.fetch(server.name).unsupported_reason(processes: processes, threads: threads, ruby_engine: ruby_engine,
                                                      options: server.options)
      end

      def ruby_engine
        @ruby_engine ||= @steps.runner(@experiment).variants.values.first.install.engine
      end

      # A step: this experiment narrowed to +server+, the counts given, a
      # closed loop at the candidate's connections, no tune: section of
      # its own (a step is a plain experiment).
      def step(server, suffix, processes:, threads:, batches:)
        others = @experiment.servers.map(&:label) - [server.label]
        changes = { "processes" => processes, "threads" => threads, "batches" => batches,
                    "load.connections" => @settings.connections_for(processes, threads), "load.rate" => nil,
                    "exclude" => others.empty? ? nil : [{ "server" => others }], "tune" => nil }
        @experiment.derive(name: "#{@experiment.name}.tune.#{slug(server.label)}.#{suffix}", changes: changes)
      end

      def slug(label)
        label.downcase.gsub(/[^a-z0-9._-]+/, "-")
      end

      # What tune cannot search: it varies processes and threads over one
      # ruby and one app, closed loop, with the agent's per-process PSS.
      def check!
        source = @experiment.source
        raise ConfigError, "#{source}: tune takes one ruby, got #{@experiment.rubies.size}" unless @experiment.rubies.size == 1
        raise ConfigError, "#{source}: tune takes one app, got #{@experiment.apps.size}" unless @experiment.apps.size == 1

        varying = @experiment.dimensions.select { |_, values| values.size > 1 }.keys - %w[server processes threads]
        raise ConfigError, "#{source}: tune varies only servers, processes and threads; #{varying.join(", ")} vary" unless varying.empty?
        raise ConfigError, "#{source}: tune runs a closed loop: remove load.rate" unless @experiment.load["rate"] == [nil]
        return if @experiment.inside == "counting"

        raise ConfigError, "#{source}: tune measures each worker's PSS with the counting agent: remove inside: off"
      end
    end
  end
end
