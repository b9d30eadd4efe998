# frozen_string_literal: true

module Rackbench
  module Instructions
    # The experiment's `instructions:` key (doc/experiment.md), how its
    # instructions trials run under callgrind:
    #
    #   measure: [time, instructions]
    #   instructions: { cache_sim: true }
    #
    # cache_sim :: callgrind simulates the caches too (`--cache-sim=yes`,
    #              Valgrind::CACHES), and the report gives estimated cycles
    #              per request beside instructions (Cycles) (default: false)
    Settings = Struct.new(:cache_sim, keyword_init: true) do
      # The Settings of the key's value (nil when absent: the defaults).
      # checker :: the Experiment::Checker, for errors naming the key
      # measure :: the experiment's measures: the key needs instructions
      def self.parse(value, checker, measure:)
        return Settings::DEFAULT if value.nil?

        checker.keys!(value, %w[cache_sim], "instructions")
        unless measure.include?(INSTRUCTIONS)
          checker.fail!("instructions", "needs instructions trials: add measure: instructions (or [time, instructions])")
        end
        new(cache_sim: checker.boolean!(value.fetch("cache_sim", false), "instructions.cache_sim")).freeze
      end

      def default? = self == Settings::DEFAULT

      # The canonical form, for the experiment's fingerprint.
      def to_h = { "cache_sim" => cache_sim }
    end
    Settings::DEFAULT = Settings.new(cache_sim: false).freeze
  end
end
