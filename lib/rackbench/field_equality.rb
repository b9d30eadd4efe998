# frozen_string_literal: true

module Rackbench
  # Equality by value for immutable classes: two objects of the same class
  # are equal (and hash alike) when their to_h is. #to_h is that of the
  # fields a class lists in FIELDS (Trial::Record, Rubies::Install), unless
  # the class defines its own (Profile::Settings: its canonical form).
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
