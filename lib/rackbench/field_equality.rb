# frozen_string_literal: true

module Rackbench
  # Equality by value for the immutable classes that list their fields in
  # FIELDS (Trial::Record, Rubies::Install): to_h of those fields, and two
  # objects of the same class are equal (and hash alike) when their to_h is.
  module FieldEquality
    def to_h
      self.class::FIELDS.to_h { |name| [name, public_send(name)] }
    end

    def ==(other)
      other.is_a?(self.class) && other.to_h == to_h
    end
    alias eql? ==

    def hash
      to_h.hash
    end
  end
end
