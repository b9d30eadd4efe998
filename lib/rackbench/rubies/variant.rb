# frozen_string_literal: true

module Rackbench
  module Rubies
    # A ruby as an experiment runs it: an Install plus interpreter options
    # and environment, under its own name, so that "ruby", "ruby --yjit"
    # and "ruby with jemalloc" are compared side by side. A frozen value;
    # the options and environment are checked when it is built.
    class Variant
      # Short options that would change what the interpreter runs rather
      # than how (a script, a loop, a directory); -X is CRuby's chdir but
      # JRuby's property switch, so it is checked per engine.
      FORBIDDEN_SHORT = %w[e S n p x C].freeze
      SHORT_WITH_ARGUMENT = %w[r I E F K T W J 0 i].freeze
      # Option prefix => the JIT it needs (see Install#jit).
      JIT_OPTIONS = { "--yjit" => "yjit", "--mjit" => "mjit", "--rjit" => "rjit" }.freeze
      ENV_NAME = /\A[A-Za-z_][A-Za-z0-9_]*\z/.freeze

      attr_reader :name, :install, :options, :env

      # Raises ConfigError for an option or variable the install cannot take.
      #
      # :name :: label results are stored under (default: the install's name, the options and the variables, joined by spaces)
      # :install :: a usable Install
      # :options :: interpreter options placed before the script, e.g. ["--yjit"] (default: [])
      # :env :: variables for the server process; a nil value unsets the variable (default: {})
      def initialize(install:, name: nil, options: [], env: {})
        @install = install
        @options = Array(options).map { |o| o.to_s.dup.freeze }.freeze
        @env = env.to_h { |k, v| [k.to_s.dup.freeze, v.nil? ? nil : v.to_s.dup.freeze] }.freeze
        @name = (name || default_name).to_s.dup.freeze
        validate!
        freeze
      end

      # The argv prefix that runs this variant: the interpreter and its
      # options, e.g. ["/usr/bin/ruby3.1", "--yjit"].
      def command
        [install.path, *options]
      end

      # The install's RUBY_DESCRIPTION plus what the variant adds.
      def description
        extras = options + env.map { |k, v| v.nil? ? "-#{k}" : "#{k}=#{v}" }
        extras.empty? ? install.description : "#{install.description} with #{extras.join(" ")}"
      end

      def to_h
        { name: name, ruby: install.name, path: install.path, options: options, env: env, description: description }
      end

      def ==(other)
        other.is_a?(Variant) && other.to_h == to_h
      end
      alias eql? ==

      def hash
        to_h.hash
      end

      private

      def default_name
        [install.name, *options, *env.map { |k, v| "#{k}=#{v}" }].join(" ")
      end

      def validate!
        options.each { |option| validate_option!(option) }
        env.each_key do |key|
          fail_config!("environment variable name #{key.inspect} is invalid (letters, digits and _)") unless key.match?(ENV_NAME)
        end
      end

      def validate_option!(option)
        if forbidden?(option)
          fail_config!("option #{option.inspect} is not allowed (give interpreter options such as --yjit; " \
                       "the server command is rackbench's)")
        end
        jit = JIT_OPTIONS.find { |prefix, _| option == prefix || option.start_with?("#{prefix}-", "#{prefix}=") }&.last
        if jit && !install.jit?(jit)
          fail_config!("option #{option} needs #{jit.upcase}, which #{about_install} does not support " \
                       "(JITs: #{install.jit.empty? ? "none" : install.jit.join(", ")})")
        end
        return unless option.start_with?("-J") && install.engine != "jruby"

        fail_config!("option #{option} is a JRuby option and #{about_install} is #{install.engine}")
      end

      # Walks a cluster of short flags ("-wd") up to the first one that takes
      # an argument ("-rjemalloc", "-W0"), since "-we" runs a script as "-e" does.
      def forbidden?(option)
        return true if !option.start_with?("-") || option == "-" || option == "--"
        return false if option.start_with?("--")

        option.each_char.drop(1).each do |flag|
          return true if FORBIDDEN_SHORT.include?(flag)
          return install.engine != "jruby" if flag == "X"
          return false if SHORT_WITH_ARGUMENT.include?(flag)
        end
        false
      end

      def about_install
        "#{install.name} (#{install.path})"
      end

      def fail_config!(message)
        raise ConfigError, "ruby '#{name}': #{message}"
      end
    end
  end
end
