# frozen_string_literal: true

module Rackbench
  module Stats
    # Argument checks shared by the statistics: each raises ArgumentError
    # naming the argument and the value, or returns the value.
    module Check
      module_function

      # values as Floats, after checking each is a finite Numeric.
      def finite_floats(values, name)
        raise ArgumentError, "#{name} must be an Array of numbers, got #{values.class}" unless values.is_a?(Array)

        values.map do |x|
          raise ArgumentError, "#{name} must be finite numbers, got #{x.inspect}" unless x.is_a?(Numeric) && x.to_f.finite?

          x.to_f
        end
      end

      # A number strictly between 0 and 1 (a confidence, a power).
      def fraction(value, name)
        return value if value.is_a?(Numeric) && value.positive? && value < 1

        raise ArgumentError, "#{name} must be a number between 0 and 1, got #{value.inspect}"
      end

      # A number in [low, high].
      def within(value, name, low, high)
        return value if value.is_a?(Numeric) && value.to_f.finite? && value.between?(low, high)

        raise ArgumentError, "#{name} must be a number in [#{low}, #{high}], got #{value.inspect}"
      end

      # A finite number > 0.
      def positive(value, name)
        return value if value.is_a?(Numeric) && value.to_f.finite? && value.positive?

        raise ArgumentError, "#{name} must be a number > 0, got #{value.inspect}"
      end

      # A finite number >= 0.
      def non_negative(value, name)
        return value if value.is_a?(Numeric) && value.to_f.finite? && value >= 0

        raise ArgumentError, "#{name} must be a number >= 0, got #{value.inspect}"
      end
    end
  end
end
