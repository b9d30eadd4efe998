# frozen_string_literal: true

module Rackbench
  # Durations as written on the command line and in experiment files:
  # "10" (seconds), "10s", "250ms", "1.5m", "100us", "1h", or a Numeric of
  # seconds. The engine accepts the same spellings.
  module Duration
    UNITS_S = { "" => 1.0, "s" => 1.0, "ms" => 1e-3, "us" => 1e-6, "m" => 60.0, "h" => 3600.0 }.freeze
    PATTERN = /\A(\d+(?:\.\d+)?)(ms|us|s|m|h)?\z/

    module_function

    # Returns seconds as a Float; raises ArgumentError naming the value.
    def parse_s(value)
      return value.to_f if value.is_a?(Numeric) && value >= 0 && value.finite?

      match = PATTERN.match(value.to_s.strip)
      raise ArgumentError, "invalid duration #{value.inspect} (expected e.g. 10s, 500ms, 2m)" unless match

      match[1].to_f * UNITS_S.fetch(match[2].to_s)
    end

    # The engine's spelling of seconds, exact to the microsecond.
    def to_engine(seconds)
      us = (seconds * 1e6).round
      (us % 1_000_000).zero? ? "#{us / 1_000_000}s" : "#{us}us"
    end
  end
end
