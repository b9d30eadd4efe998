# frozen_string_literal: true

module Rackbench
  class Report
    # The order configurations are listed in, and so which one is "first"
    # (the default baseline): the order of the experiment file, where the
    # user wrote the reference ruby or server first. Since rackbench 0.2 the
    # run stores it (the configurations' keys in their source's order); for
    # an experiment stored by 0.1 the stored experiment text is parsed again
    # for it, and when that fails (a user app's directory has moved, a
    # micro-benchmark experiment), values are ordered per dimension: numbers
    # ascending, text by where it first appears in the experiment text, then
    # by the order the trials were stored in.
    class ConfigOrder
      # source_text :: the stored experiment file text (may be nil)
      # all_dims :: the dims Hash of every configuration, in the order their
      #             first trials were stored
      # :config_keys :: the stored order of the configurations' keys, or nil
      def initialize(source_text, all_dims, config_keys: nil)
        @source_text = source_text.to_s
        @matrix_rank = config_keys ? config_keys.each_with_index.to_h : matrix_rank
        @first_seen = {}
        all_dims.each { |dims| dims.each { |name, value| @first_seen[[name, value]] ||= @first_seen.size } }
      end

      # A sort key for the configuration with these dims.
      def rank(dims)
        key = Experiment::Canonical.json(dims)
        return [0, @matrix_rank[key]] if @matrix_rank&.key?(key)

        [1, dims.map { |name, value| value_rank(name, value) }]
      end

      private

      def matrix_rank
        experiment = Experiment.parse(@source_text, known_apps: nil)
        experiment.configurations.each_with_index.to_h { |config, i| [config.key, i] }
      rescue Error, StandardError
        nil
      end

      def value_rank(name, value)
        case value
        when Numeric then [0, value, 0]
        when nil then [1, 0, 0]
        else [2, @source_text.index(value.to_s) || @source_text.size, @first_seen.fetch([name, value], 0)]
        end
      end
    end
  end
end
