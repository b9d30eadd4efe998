# frozen_string_literal: true

require "digest"
require "json"
require "rbconfig"
require_relative "../duration"
require_relative "../deep_freeze"

module Rackbench
  module Micro
    # What `rackbench micro fibers` runs, validated: which rubies, worker
    # kinds (modes) and worker counts, how many messages, how often
    # (batches) and in which order (seed). A frozen value; every bad value
    # raises UsageError as one line naming the option.
    class Settings
      DEFAULT_WORKERS = [1, 10, 100].freeze
      # Messages per run, split evenly over the workers (as the seed post
      # did: 5 x 20,000, 10 x 10,000, 100 x 1,000), so that every worker
      # count does the same total work: about 1-2 s per round for CRuby on
      # a small machine.
      DEFAULT_TOTAL_MESSAGES = 100_000
      DEFAULT_BATCHES = 3
      DEFAULT_SEED = 1
      DEFAULT_WARMUP_ROUNDS = 1
      DEFAULT_WORK_PASSES = 1
      DEFAULT_TIMEOUT_S = 300.0
      # Beyond this a run measures the kernel's scheduler and the file
      # limit, not the ruby; the seed's 1,000 processes already crashed
      # old rubies.
      MAX_WORKERS = 2000
      # A fresh ruby running the benchmark once, roughly, for the plan's
      # estimate; the progress bar's ETA learns the real figure.
      ESTIMATED_TRIAL_S = 3.0

      # name :: experiment name results are stored under ("<file's name>-micro-fibers", or "micro-fibers")
      # rubies :: Array of ruby specs ({name:, ruby:, options:, env:}) as Rubies.resolve takes them
      # modes :: Array of "threads", "processes", "fibers"
      # workers :: Array of Integer worker counts
      # messages :: messages per worker, or nil to derive it from total_messages
      # total_messages :: messages per run over all workers (used when messages is nil)
      # warmup :: untimed rounds before the measured one
      # work :: checksum passes per message
      # batches, seed :: replicates and the seed of their order
      # timeout_s :: deadline of one benchmark process
      # cpus :: CPUs to pin to, :all for no pinning, nil for the runner's server CPUs
      ATTRIBUTES = %i[name rubies modes workers messages total_messages warmup work batches seed timeout_s cpus].freeze
      attr_reader(*ATTRIBUTES)

      # Builds settings from command-line strings (or already typed
      # values); nil means the default. experiment (an Experiment, or nil)
      # provides the name, rubies, seed and batches that options do not.
      #
      # :rubies :: Array of "NAME [OPTION...] [VAR=VALUE...]" strings (replace the experiment's rubies)
      # :modes :: "threads,fibers" (default: all three)
      # :workers :: "1,10,100" (default: DEFAULT_WORKERS)
      # :messages :: messages per worker (default: derived from total_messages)
      # :total_messages :: messages per run (default: DEFAULT_TOTAL_MESSAGES)
      # :warmup, :work, :batches, :seed :: integers (defaults above; batches and seed from the experiment first)
      # :timeout :: a duration, "300s", "5m" (default: 300 s)
      # :cpus :: "0,1", "0-3" or "all" (default: the runner's server CPUs)
      def self.build(experiment: nil, rubies: nil, modes: nil, workers: nil, messages: nil, total_messages: nil,
                     warmup: nil, work: nil, batches: nil, seed: nil, timeout: nil, cpus: nil)
        if messages && total_messages
          raise UsageError, "give --messages (per worker) or --total-messages (per run), not both"
        end

        new(
          name: experiment ? "#{experiment.name}-#{FIBERS_APP}" : FIBERS_APP,
          rubies: ruby_specs(rubies, experiment),
          modes: list(modes || FIBERS_MODES, "--modes") { |mode| mode!(mode) },
          workers: list(workers || DEFAULT_WORKERS, "--workers") { |w| integer!(w, "--workers", 1, MAX_WORKERS) },
          messages: messages && integer!(messages, "--messages", 1),
          total_messages: messages ? nil : integer!(total_messages || DEFAULT_TOTAL_MESSAGES, "--total-messages", 1),
          warmup: integer!(warmup || DEFAULT_WARMUP_ROUNDS, "--warmup", 0),
          work: integer!(work || DEFAULT_WORK_PASSES, "--work", 0),
          batches: integer!(batches || experiment&.batches || DEFAULT_BATCHES, "--batches", 1),
          seed: integer!(seed || experiment&.seed || DEFAULT_SEED, "--seed", 0),
          timeout_s: duration!(timeout || DEFAULT_TIMEOUT_S, "--timeout"),
          cpus: cpus!(cpus)
        )
      end

      # Use Settings.build; this takes validated values.
      def initialize(**values)
        ATTRIBUTES.each { |name| instance_variable_set(:"@#{name}", DeepFreeze.call(values.fetch(name))) }
        freeze
      end

      # Messages each worker receives per round with workers workers.
      def messages_for(workers)
        messages || [total_messages / workers, 1].max
      end

      # One configuration of the benchmark. dims follows the HTTP
      # configurations' convention (see Experiment::Config): "ruby",
      # "server", "app", "processes" and "threads" always, so the report
      # groups micro trials as it groups HTTP ones, plus "workers".
      # "server" holds the mode, "app" is "micro-fibers"; processes and
      # threads count the workers as the mode runs them (W processes, W
      # threads, or 1 and 1 for fibers in one thread).
      Config = Struct.new(:ruby, :mode, :workers, :messages, :dims, :key, keyword_init: true) do
        def to_s
          "ruby=#{ruby} mode=#{mode} workers=#{workers}"
        end

        def estimated_s
          ESTIMATED_TRIAL_S
        end
      end

      # The kind of trial a micro-benchmark runs (Trial::Script).
      def trial_kind
        "script"
      end

      # What Trial::Script runs: the script, its arguments for one
      # configuration, the format of the document it prints, and the
      # settings stored with each trial.
      def script
        FIBERS_SCRIPT
      end

      def script_arguments(config)
        ["--mode", config.mode, "--workers", config.workers.to_s, "--messages", config.messages.to_s,
         "--warmup", warmup.to_s, "--work", work.to_s]
      end

      def document_format
        "rackbench-micro-fibers"
      end

      def app_name
        FIBERS_APP
      end

      def script_settings(config)
        { "benchmark" => "fibers", "mode" => config.mode, "workers" => config.workers,
          "messages_per_worker" => config.messages, "warmup_rounds" => warmup, "work_passes" => work,
          "timeout_s" => timeout_s }
      end

      # Where the runs are pinned: the runner's server CPUs by default, all
      # CPUs (unpinned) with cpus: :all, or the CPUs given.
      def cpu_layout
        return Runner::CpuLayout.detect if cpus.nil?
        return Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil) if cpus == :all

        Runner::CpuLayout.new(server_cpus: cpus, engine_cpus: nil)
      end

      # How a run's time is estimated, for the plan's listing.
      def estimate_note
        "~#{ESTIMATED_TRIAL_S.round}s per run, a guess"
      end

      # Nothing is excluded from a micro-benchmark's matrix.
      def excluded_count
        0
      end

      # The rubies as Rubies.resolve takes them.
      def ruby_specs
        rubies
      end

      # The configurations: every resolved ruby (its label, from variants)
      # x mode x workers.
      def configurations_for(variants)
        variants.keys.product(modes, workers).map do |ruby, mode, count|
          dims = self.class.dims(ruby, mode, count).freeze
          Config.new(ruby: ruby, mode: mode, workers: count, messages: messages_for(count), dims: dims,
                     key: Experiment::Canonical.json(dims).freeze).freeze
        end
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

      # The settings as stored with the experiment: the canonical form with
      # the modes in the order given (the canonical form sorts them; the
      # report lists modes, and picks its baseline, in that order).
      def source_text
        JSON.pretty_generate(canonical.merge("modes" => modes))
      end

      # What the results depend on, as plain data: the fingerprint's input
      # and the experiment's stored source text. The timeout and CPUs say
      # how, not what, and are left out (as an HTTP experiment's are).
      def canonical
        {
          "format" => 1, "benchmark" => "fibers", "name" => name, "seed" => seed, "batches" => batches,
          "rubies" => rubies.map { |spec| canonical_ruby(spec) }.sort_by { |spec| JSON.generate(spec) },
          "modes" => modes.sort, "workers" => workers.sort, "messages_per_worker" => messages,
          "total_messages" => total_messages, "warmup_rounds" => warmup, "work_passes" => work
        }
      end

      # A ruby spec as plain data; a ruby built from source is its recipe's
      # key (Experiment#canonical_ruby says why).
      def canonical_ruby(spec)
        hash = spec.transform_keys(&:to_s)
        hash["build"] ? hash.merge("build" => hash["build"].key) : hash
      end

      # SHA-256 (hex) of the canonical settings: a resumed run finds its
      # experiment by name and fingerprint.
      def fingerprint
        Digest::SHA256.hexdigest(Experiment::Canonical.json(canonical))
      end

      class << self
        private

        # "ruby --yjit MALLOC_ARENA_MAX=2" => { ruby: "ruby", options: ["--yjit"], env: {...} }.
        def ruby_specs(rubies, experiment)
          unless rubies.nil? || rubies.empty?
            return rubies.map do |text|
              ruby, *rest = text.to_s.split
              raise UsageError, "--ruby needs a ruby name, version or path" unless ruby

              env, options = rest.partition { |word| word.match?(/\A[A-Za-z_][A-Za-z0-9_]*=/) }
              { name: nil, ruby: ruby, options: options, env: env.to_h { |pair| pair.split("=", 2) } }
            end
          end
          return [{ name: nil, ruby: RbConfig.ruby, options: [], env: {} }] unless experiment

          experiment.rubies.map do |r|
            { name: r.label, ruby: r.ruby, options: r.options.to_a, env: r.env.to_h, build: r.build }.compact
          end
        end

        def list(value, option)
          items = value.is_a?(Array) ? value : value.to_s.split(",", -1)
          items = items.map { |item| item.is_a?(String) ? item.strip : item }
          raise UsageError, "#{option} needs at least one value" if items.empty?

          values = items.map { |item| yield item }
          duplicate = values.find { |v| values.count(v) > 1 }
          raise UsageError, "#{option}: #{duplicate} is given twice" if duplicate

          values
        end

        def mode!(text)
          return text if FIBERS_MODES.include?(text)

          raise UsageError, "--modes: unknown mode #{text.to_s.inspect} (modes: #{FIBERS_MODES.join(", ")})"
        end

        def integer!(value, option, min, max = nil)
          number = value.is_a?(Integer) ? value : Integer(value.to_s, 10)
          raise ArgumentError if number < min || (max && number > max)

          number
        rescue ArgumentError, TypeError
          range = max ? "from #{min} to #{max}" : "at least #{min}"
          raise UsageError, "#{option}: #{value.to_s.inspect} is not an integer #{range}"
        end

        def duration!(value, option)
          seconds = Duration.parse_s(value)
          raise ArgumentError, "must be more than 0" unless seconds.positive?

          seconds
        rescue ArgumentError => e
          raise UsageError, "#{option}: #{e.message}"
        end

        # nil (the default layout), :all (unpinned) or a sorted Array.
        def cpus!(value)
          return nil if value.nil?
          return :all if value == :all || value.to_s.strip == "all"

          cpus = value.to_s.split(",").flat_map do |part|
            match = part.strip.match(/\A(\d+)(?:-(\d+))?\z/)
            raise UsageError, "--cpus: #{value.to_s.inspect} is not a CPU list such as 0,1 or 0-3 (or all)" unless match

            (Integer(match[1])..Integer(match[2] || match[1])).to_a
          end
          raise UsageError, "--cpus: #{value.to_s.inspect} names no CPU" if cpus.empty?

          cpus.uniq.sort
        end
      end
    end
  end
end
