# frozen_string_literal: true

require "json"

module Rackbench
  class Store
    # A Trial::Record to the +trials+ row that holds it and back: which
    # fields are JSON text, and nothing else. Every field of the record is
    # a column of its own name (doc/store.md); no figure is copied out of
    # the documents. Pure functions, no I/O.
    module RecordCodec
      JSON_COLUMNS = Trial::Record::DOCUMENTS
      COLUMNS = Trial::Record::FIELDS
      # What Store#trials leaves out with result: false: the engine's
      # document, by far the largest column.
      LARGE = %i[result].freeze

      module_function

      # The row to insert for record, under experiment_id. Raises
      # ArgumentError for a document JSON cannot hold (a bug in the kind).
      def encode(experiment_id, record)
        row = { experiment_id: experiment_id }
        COLUMNS.each do |name|
          value = record.public_send(name)
          row[name] = JSON_COLUMNS.include?(name) ? dump(record.key, name, value) : value
        end
        row
      end

      # The Trial::Record of a stored row (columns left out of the select
      # are nil). Store::Error when a JSON column is damaged.
      def decode(row)
        fields = COLUMNS.to_h do |name|
          value = row[name]
          [name, JSON_COLUMNS.include?(name) ? load(row, name, value) : value]
        end
        Trial::Record.new(parsed: true, **fields)
      rescue ArgumentError => e
        raise Store::Error, "trial #{row[:key]} (id #{row[:id]}) cannot be read: #{e.message}"
      end

      def dump(key, name, value)
        value.nil? ? nil : JSON.generate(value)
      rescue JSON::GeneratorError => e
        raise ArgumentError, "trial #{key}: #{name} cannot be stored as JSON (#{e.message.lines.first.strip})"
      end

      def load(row, name, text)
        # Frozen as parsed (strings deduplicated): a record's documents are
        # frozen anyway, and this spares copying them.
        text.nil? ? nil : JSON.parse(text, freeze: true)
      rescue JSON::ParserError
        raise Store::Error, "trial #{row[:key]} (id #{row[:id]}): column #{name} holds invalid JSON; " \
                            "the results database is damaged"
      end
    end
  end
end
