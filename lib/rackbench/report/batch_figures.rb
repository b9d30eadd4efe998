# frozen_string_literal: true

module Rackbench
  class Report
    # The figures a configuration measured once per batch, which a gate's
    # thresholds (`--fail-on cpu>5%`) and a history's series (`--figure
    # p99`) read, defined once: each has a name, which way is better, how
    # it is written, and how its per-batch values are read from a
    # ConfigSummary. A new figure is one entry of ALL (its doc line is in
    # doc/ci.md, which a test checks).
    #
    # The batch is the unit of replication, so every figure is a list of
    # one value per ok batch, compared between configurations by the same
    # bootstrap of medians as requests/s (Stats.compare).
    module BatchFigures
      # name :: what --fail-on and --figure call it
      # aliases :: other names it answers to
      # words :: how the views name it
      # better :: :higher or :lower
      # unit :: how its values are written (#format): :rate, :us, :count or :bytes
      # values :: ConfigSummary => [value of each ok batch that has one] (nil: none has)
      # instructions :: true for instructions per request, judged with their
      #                 own equivalence band (Options#instructions_equivalence)
      Figure = Struct.new(:name, :aliases, :words, :better, :unit, :values, :instructions, keyword_init: true) do
        # The values of +config+'s batches that have the figure, or nil
        # when none has (a figure its runs did not measure).
        def of(config)
          found = Array(values.call(config)).compact
          found.empty? ? nil : found
        end

        # The Stats::Comparison verdict that means worse: a lower rate
        # ("slower" for B/A below 1), a higher latency, CPU or memory.
        def worse_verdict
          better == :higher ? Stats::SLOWER : Stats::FASTER
        end

        # How much worse B is than A, as a fraction of A (0.05 = 5% worse,
        # negative = better), from the ratio B/A.
        def worsening(ratio)
          better == :higher ? 1.0 - ratio : ratio - 1.0
        end

        def format(value)
          return Units::NONE if value.nil?

          case unit
          when :rate then Units.rate_rounded(value)
          when :us then Units.latency_us(value)
          when :bytes then Units.megabytes(value)
          else value >= 100 ? Kernel.format("%.0f", value) : Kernel.format("%.2f", value)
          end
        end
      end

      # A figure of the in-server agent (InsideSummary::FIGURES): the
      # values of the batches whose agent counted it.
      def self.inside(name)
        ->(config) { config.inside&.[](name)&.values }
      end

      # Each ok batch's latency percentile +key+ ("p99_9"), from its engine
      # result.
      def self.latency(key)
        ->(config) { config.ok_trials.map { |t| t.record.latency_us&.[](key) } }
      end
      private_class_method :inside, :latency

      ALL = [
        Figure.new(name: "rps", aliases: %w[slower], words: "requests/s", better: :higher, unit: :rate,
                   values: ->(config) { config.rps_values }),
        *%w[p50 p90 p99 p99.9].map do |p|
          Figure.new(name: p, aliases: [], words: "#{p} latency", better: :lower, unit: :us, values: latency(p.tr(".", "_")))
        end,
        Figure.new(name: "cpu", aliases: %w[cpu_us_per_request], words: "server CPU per request", better: :lower,
                   unit: :us, values: inside("cpu_us_per_request")),
        Figure.new(name: "allocations", aliases: %w[allocations_per_request], words: "allocations per request",
                   better: :lower, unit: :count, values: inside("allocations_per_request")),
        # The sampler's peak over the window (PSS of the server's process
        # tree, RSS where PSS is unknown): measured with or without the agent.
        Figure.new(name: "memory", aliases: %w[pss], words: "server memory (PSS peak)", better: :lower, unit: :bytes,
                   values: ->(config) { config.ok_trials.map { |t| t.record.pss_peak_bytes || t.record.rss_peak_bytes } }),
        # callgrind's count over each instructions trial's window
        # (`measure: instructions`, InstructionsSummary): a batch varies by
        # about 0.1% where time varies by percents, so a limit such as
        # `instructions>0.5%` is judged with the instructions' own band.
        Figure.new(name: "instructions", aliases: %w[instructions_per_request], words: "instructions per request",
                   better: :lower, unit: :count, values: ->(config) { config.instructions&.values }, instructions: true),
        # Cycles estimated from callgrind's cache simulation (`instructions:
        # { cache_sim: true }`, CyclesSummary), as steady as its counts.
        Figure.new(name: "cycles", aliases: %w[cycles_per_request], words: "estimated cycles per request",
                   better: :lower, unit: :count, values: ->(config) { config.cycles&.values }, instructions: true)
      ].freeze

      # The Figure called +name+ (or one of its aliases). Raises
      # UsageError naming the figures there are.
      def self.fetch(name)
        ALL.find { |f| f.name == name || f.aliases.include?(name) } ||
          raise(UsageError, "unknown figure '#{name}' (figures: #{names.join(", ")})")
      end

      # Every figure's name, then the aliases: what --fail-on accepts.
      def self.names
        ALL.map(&:name)
      end
    end
  end
end
