# frozen_string_literal: true

require "json"

module Rackbench
  class Experiment
    # Canonical JSON: the same data always gives the same bytes. Hash keys
    # are sorted at every level, so neither the order of keys in the file
    # nor Ruby's insertion order can change a configuration key or an
    # experiment fingerprint.
    module Canonical
      module_function

      def json(value)
        JSON.generate(sorted(value))
      end

      # A sort key for values of mixed types (nil, numbers, strings, booleans
      # in one dimension), e.g. rate: [null, 500].
      def sort_key(value)
        json(value)
      end

      def sorted(value)
        case value
        when Hash then value.map { |k, v| [k.to_s, sorted(v)] }.sort_by(&:first).to_h
        when Array then value.map { |v| sorted(v) }
        when Struct then sorted(value.to_h)
        when Symbol then value.to_s
        else value
        end
      end
    end
  end
end
