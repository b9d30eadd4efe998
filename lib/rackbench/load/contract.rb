# frozen_string_literal: true

module Rackbench
  # The checks both engine documents (LoadResult, WsLoadResult) make of
  # their contract: a key's value of the classes the contract says, and
  # every key an object must have. A failure is an EngineError naming the
  # key, never a nil further on.
  module LoadContract
    private

    def check_types(hash, spec, prefix)
      spec.each do |key, types|
        value = hash[key]
        next if types.any? { |t| value.is_a?(t) }

        raise EngineError, "load engine result: #{prefix}#{key} is #{value.inspect[0, 40]}, " \
                           "expected #{types.join(" or ")}"
      end
    end

    def require_keys(name, hash, keys)
      missing = keys - hash.keys
      raise EngineError, "load engine result: #{name} lacks #{missing.join(", ")}" unless missing.empty?
    end
  end
end
