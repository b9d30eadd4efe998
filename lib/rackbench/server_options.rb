# frozen_string_literal: true

require_relative "errors"

module Rackbench
  # What an app-server adapter accepts in an experiment's
  # <tt>servers[].options</tt>: a Schema of Options, each with a Type. The
  # experiment loader checks a file's options against the adapter's schema
  # before anything runs, and the adapter checks them again when it builds a
  # trial's command, so an option is either applied or refused, never
  # silently ignored.
  #
  #   schema = ServerOptions::Schema.new(
  #     ServerOptions::Option.new(key: "timeout", type: ServerOptions.integer(min: 3), default: "60",
  #                               effect: "kills a worker busy for longer", reaches: "`timeout N` (config)")
  #   )
  #   schema.problem("timeout", "30s")  # => 'must be an integer >= 3, got "30s"'
  module ServerOptions
    # A value type: +text+ says what is accepted ("true or false", "an
    # integer 1-255"), for errors and doc/servers.md; the block decides.
    class Type
      attr_reader :text

      def initialize(text, &accepts)
        @text = text.freeze
        @accepts = accepts
        freeze
      end

      def accept?(value)
        @accepts.call(value) ? true : false
      end

      def to_s
        text
      end
    end

    BOOLEAN = Type.new("true or false") { |value| [true, false].include?(value) }

    # A non-empty String without NUL (it becomes one argv element or an
    # inspected literal, never code).
    STRING = Type.new("a string") { |value| value.is_a?(String) && !value.empty? && !value.include?("\0") }

    module_function

    # An Integer in min..max (max nil: no upper bound).
    def integer(min:, max: nil)
      Type.new(max ? "an integer #{min}-#{max}" : "an integer >= #{min}") do |value|
        value.is_a?(Integer) && value >= min && (max.nil? || value <= max)
      end
    end

    # A finite Integer or Float in min..max (YAML reads 1 as an Integer and
    # 1.5 as a Float; both are numbers of seconds here).
    def number(min:, max: nil)
      Type.new(max ? "a number #{min}-#{max}" : "a number >= #{min}") do |value|
        (value.is_a?(Integer) || (value.is_a?(Float) && value.finite?)) && value >= min && (max.nil? || value <= max)
      end
    end

    # A non-empty list of Integers, each >= min.
    def integer_list(min:)
      Type.new("a list of integers >= #{min}") do |value|
        value.is_a?(Array) && !value.empty? && value.all? { |item| item.is_a?(Integer) && item >= min }
      end
    end

    # Any of +types+ ("true or false, or an integer >= 0").
    def either(*types)
      Type.new(types.map(&:text).join(", or ")) { |value| types.any? { |type| type.accept?(value) } }
    end

    # How an error shows a value the user wrote.
    def describe(value)
      case value
      when nil then "nothing (null)"
      when Hash then "a mapping"
      when Array then "a list #{value.inspect}"
      else value.inspect
      end
    end

    # One option an adapter accepts, as doc/servers.md lists it:
    #
    # key :: the key under +options+ (String)
    # type :: the Type of its value
    # default :: what the server does when the key is absent (text)
    # effect :: what the option does (text)
    # reaches :: how it reaches the server: the config line or flag (text)
    Option = Struct.new(:key, :type, :default, :effect, :reaches, keyword_init: true) do
      def initialize(**)
        super
        self.key = key.to_s.freeze
        freeze
      end
    end

    # The options one adapter accepts, in the order its documentation
    # lists them. Empty for an adapter that takes none.
    class Schema
      include Enumerable

      def initialize(*options)
        @options = options.to_h { |option| [option.key, option] }.freeze
        freeze
      end

      def each(&block)
        @options.each_value(&block)
      end

      # The accepted keys (Strings), in declaration order.
      def keys
        @options.keys
      end

      def empty?
        @options.empty?
      end

      def key?(key)
        @options.key?(key.to_s)
      end

      # The Option for +key+; KeyError when there is none.
      def fetch(key)
        @options.fetch(key.to_s)
      end

      # nil when +value+ is acceptable for +key+, else the one-line problem
      # ("unknown option", or "must be true or false, got 3"), without the
      # key: the caller names the key in its own format.
      def problem(key, value)
        return "unknown option" unless key?(key)

        type = fetch(key).type
        "must be #{type.text}, got #{ServerOptions.describe(value)}" unless type.accept?(value)
      end

      # Checks a whole options Hash (as a ServerSpec carries it) and returns
      # it with String keys. Raises ConfigError naming +server+ and the key:
      # the experiment loader reports the same mistakes earlier, with the
      # file and key path; this is the adapter's own guard for any other
      # caller.
      def validate!(options, server)
        options = (options || {}).to_h.transform_keys(&:to_s)
        options.each do |key, value|
          if empty?
            raise ConfigError, "#{server} takes no options (got #{key})"
          elsif !key?(key)
            raise ConfigError, "unknown option #{key} for #{server}; supported: #{keys.join(", ")}"
          elsif (message = problem(key, value))
            raise ConfigError, "#{server} option #{key}: #{message}"
          end
        end
        options
      end
    end

    # The schema of an adapter that takes no options.
    NONE = Schema.new

    # The key of the forking servers' option that compacts the heap before
    # workers are forked (puma, unicorn, pitchfork).
    GC_COMPACT_BEFORE_FORK = "gc_compact_before_fork"

    # The option itself; +hook+ names the server's hook that runs
    # GC.compact (text for doc/servers.md).
    def gc_compact_before_fork(hook:, default: "false")
      Option.new(key: GC_COMPACT_BEFORE_FORK, type: BOOLEAN, default: default,
                 effect: "true: GC.compact in the process workers are forked from, just before it forks them, " \
                         "so they share a compacted heap copy-on-write; every worker's identity proves it " \
                         "(GC.compact count >= 1 inherited at its fork)",
                 reaches: hook)
    end
    module_function :gc_compact_before_fork
  end
end
