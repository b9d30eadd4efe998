# frozen_string_literal: true

require "set"

module Rackbench
  module Micro
    # The runs of `rackbench micro fibers` in the order they happen: every
    # (ruby, mode, workers) configuration once per batch, batch by batch,
    # each batch shuffled by Random.new(seed + batch), as the HTTP plan
    # (lib/rackbench/experiment/plan.rb) does and for the same reason: slow
    # drift of the machine spreads over every configuration instead of
    # reading as a difference between them, and an interrupted run still
    # holds whole batches. Configurations a ruby cannot run (forked workers
    # on JRuby) are left out up front and listed in #skipped.
    class Plan
      include Enumerable

      # One configuration. dims follows the HTTP runner's convention (see
      # Experiment::Config): "ruby", "server", "app", "processes" and
      # "threads" always, so the generic report groups micro trials as it
      # groups HTTP ones, plus "workers". "server" holds the mode, "app" is
      # "micro-fibers"; processes and threads count the workers as the
      # mode runs them (W processes, W threads, or 1 and 1 for fibers in
      # one thread).
      Config = Struct.new(:ruby, :mode, :workers, :messages, :dims, :key, keyword_init: true) do
        def to_s
          "ruby=#{ruby} mode=#{mode} workers=#{workers}"
        end
      end

      # One run of a configuration: +key+ is "<config key>#batch=<n>",
      # +index+ its 1-based position in the plan.
      Trial = Struct.new(:config, :batch, :key, :index, keyword_init: true)

      Skipped = Struct.new(:config, :reason, keyword_init: true)

      attr_reader :trials, :skipped, :configurations

      # settings :: Settings
      # variants :: ruby label => Rubies::Variant (for each ruby's engine)
      def initialize(settings, variants)
        @settings = settings
        @configurations = build_configurations(variants.keys).freeze
        reasons = @configurations.to_h do |config|
          [config.key, unsupported_reason(config, variants.fetch(config.ruby).install.engine)]
        end
        @skipped = @configurations.select { |c| reasons[c.key] }
                                  .map { |c| Skipped.new(config: c, reason: reasons[c.key]).freeze }.freeze
        @trials = order(reasons).freeze
        freeze
      end

      def each(&block)
        trials.each(&block)
      end

      def size
        trials.size
      end

      # The trials whose key is not in done_keys, in plan order.
      def remaining(done_keys)
        done = done_keys.to_set
        trials.reject { |trial| done.include?(trial.key) }
      end

      # The dims of one configuration (see Config).
      def self.dims(ruby, mode, workers)
        processes, threads = case mode
                             when "processes" then [workers, 1]
                             when "threads" then [1, workers]
                             else [1, 1]
                             end
        { "ruby" => ruby, "server" => mode, "app" => FIBERS_APP, "processes" => processes, "threads" => threads,
          "workers" => workers }
      end

      private

      def build_configurations(labels)
        labels.product(@settings.modes, @settings.workers).map do |ruby, mode, workers|
          dims = self.class.dims(ruby, mode, workers).freeze
          Config.new(ruby: ruby, mode: mode, workers: workers, messages: @settings.messages_for(workers), dims: dims,
                     key: Experiment::Canonical.json(dims).freeze).freeze
        end
      end

      def unsupported_reason(config, engine)
        return nil unless config.mode == "processes" && NO_FORK_ENGINES.include?(engine)

        "fork is not available on #{engine}"
      end

      # Shuffles every configuration, supported or not, then drops the
      # unsupported ones, so which rubies can fork does not change the order
      # of the rest. The base order is by key, not by how the options were
      # written, so the same settings always give the same plan.
      def order(reasons)
        base = @configurations.sort_by(&:key)
        pairs = (1..@settings.batches).flat_map do |batch|
          base.shuffle(random: Random.new(@settings.seed + batch))
              .reject { |config| reasons[config.key] }
              .map { |config| [config, batch] }
        end
        pairs.each_with_index.map do |(config, batch), i|
          Trial.new(config: config, batch: batch, key: "#{config.key}#batch=#{batch}".freeze, index: i + 1).freeze
        end
      end
    end
  end
end
