# frozen_string_literal: true

require "did_you_mean"

module Rackbench
  class Experiment
    # Type and range checks for one experiment file. Every failure raises
    # ConfigError as one line that starts with the file and the key, e.g.
    #   experiment.yml: load.conections: unknown key (did you mean connections?); allowed: ...
    # so that the user can find the mistake without reading a backtrace.
    #
    # Keys are written as paths: +load.connections+, +rubies[1].name+,
    # +exclude[0].server+.
    class Checker
      # A ruby, server or app label as it appears in results.
      LABEL = /\A[A-Za-z0-9._+-]+\z/
      # An environment variable name.
      ENV_NAME = /\A[A-Za-z_][A-Za-z0-9_]*\z/

      attr_reader :source

      # +source+ is how errors name the file (usually the path as given).
      def initialize(source)
        @source = source
      end

      # Raises ConfigError for +key+ (a key path, or nil for the whole file).
      def fail!(key, message)
        raise ConfigError, [source, key, message].compact.join(": ")
      end

      # "did you mean X?" for a close match of +word+ in +candidates+, or nil.
      def suggestion(word, candidates)
        best = DidYouMean::SpellChecker.new(dictionary: candidates.map(&:to_s)).correct(word.to_s).first
        best && "did you mean #{best}?"
      end

      # Checks that +hash+ is a mapping whose keys are all in +allowed+
      # (Strings) and that the +required+ ones are present. Returns +hash+.
      def keys!(hash, allowed, key, required: [])
        mapping!(hash, key)
        hash.each_key do |name|
          next if allowed.include?(name)

          hint = suggestion(name, allowed)
          fail!(join(key, name), "unknown key#{" (#{hint})" if hint}; allowed: #{allowed.join(", ")}")
        end
        required.each { |name| fail!(join(key, name), "required") unless hash.key?(name) }
        hash
      end

      def mapping!(value, key)
        fail!(key, "must be a mapping (key: value), got #{describe(value)}") unless value.is_a?(Hash)
        value
      end

      # A value that may be written once or as a list: returns a non-empty
      # Array of [element, key path of the element] pairs. nil (a key with
      # nothing after the colon) is an error, not an empty list.
      def items!(value, key)
        fail!(key, "must be a value or a list, got nothing (null)") if value.nil?
        return [[value, key]] unless value.is_a?(Array)

        fail!(key, "must not be an empty list") if value.empty?
        value.each_with_index.map { |item, i| [item, "#{key}[#{i}]"] }
      end

      # Like #items!, for lists of values: returns the elements as the block
      # normalizes them (it receives element and key path), rejecting
      # duplicates after normalization ("10s" and 10 are the same).
      def list!(value, key, &normalize)
        normalized = items!(value, key).map(&normalize)
        duplicate = normalized.group_by(&:itself).find { |_, same| same.size > 1 }
        fail!(key, "duplicate value #{duplicate.first.inspect}") if duplicate
        normalized
      end

      def integer!(value, key, min:, max: nil)
        ok = value.is_a?(Integer) && value >= min && (max.nil? || value <= max)
        range = max ? "#{min}-#{max}" : ">= #{min}"
        fail!(key, "must be an integer #{range}, got #{describe(value)}") unless ok
        value
      end

      # Returns a frozen copy, so that values cannot change behind a frozen
      # experiment.
      def string!(value, key)
        fail!(key, "must be a string, got #{describe(value)}") unless value.is_a?(String) && !value.empty?
        -value
      end

      def boolean!(value, key)
        fail!(key, "must be true or false, got #{describe(value)}") unless [true, false].include?(value)
        value
      end

      def pattern!(value, key, pattern, expected)
        string = string!(value, key)
        fail!(key, "#{value.inspect} is not a valid #{expected}") unless pattern.match?(string)
        string
      end

      # Duration in seconds (Float) via Rackbench::Duration; +min_s+ is the
      # smallest accepted value (a few ms at most), +positive+ excludes zero.
      def duration!(value, key, min_s: 0.0, positive: false)
        fail!(key, "must be a duration such as 10s or 500ms, got #{describe(value)}") if [true, false, nil].include?(value)
        seconds = begin
          Duration.parse_s(value)
        rescue ArgumentError => e
          fail!(key, e.message)
        end
        fail!(key, "must be more than 0, got #{value.inspect}") if positive && !seconds.positive?
        fail!(key, "must be at least #{(min_s * 1000).round}ms, got #{value.inspect}") if seconds < min_s
        seconds
      end

      # One of +allowed+ (Strings), with a did-you-mean in the error.
      # +note+ is appended to the error (a hint for what else to write).
      def one_of!(value, key, allowed, what, note: nil)
        string = string!(value, key)
        return string if allowed.include?(string)

        hint = suggestion(value, allowed)
        fail!(key, "unknown #{what} #{value.inspect}#{" (#{hint})" if hint}; known: #{allowed.join(", ")}#{"; #{note}" if note}")
      end

      # Environment values are strings; numbers are accepted and converted
      # because YAML reads an unquoted 10000 as an Integer.
      def env_value!(value, key)
        case value
        when String then -value
        when Integer, Float then -value.to_s
        else fail!(key, "must be a string or a number, got #{describe(value)}")
        end
      end

      def env_name!(name, key)
        fail!(key, "#{name.inspect} is not a valid environment variable name") unless name.is_a?(String) && ENV_NAME.match?(name)
        fail!(key, "#{name} is reserved: rackbench sets the RACKBENCH_* variables itself") if name.start_with?("RACKBENCH_")
        name
      end

      def join(key, name)
        key ? "#{key}.#{name}" : name.to_s
      end

      # How an error shows a value the user wrote.
      def describe(value)
        case value
        when nil then "nothing (null)"
        when Hash then "a mapping"
        when Array then "a list"
        else value.inspect
        end
      end
    end
  end
end
