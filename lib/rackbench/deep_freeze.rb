# frozen_string_literal: true

module Rackbench
  # A frozen copy of nested Arrays, Hashes and Strings: parsed settings
  # that every trial shares, so that no trial can change them for the next.
  module DeepFreeze
    module_function

    def call(value)
      case value
      when Hash then value.to_h { |k, v| [call(k), call(v)] }.freeze
      when Array then value.map { |v| call(v) }.freeze
      when String then value.dup.freeze
      else value
      end
    end
  end
end
