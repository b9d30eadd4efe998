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
      # The mallocs a variant may name (+malloc:+): glibc's own (nothing
      # preloaded) or jemalloc, preloaded from the system's package.
      MALLOCS = %w[glibc jemalloc].freeze

      attr_reader :name, :install, :options, :env, :malloc

      # Raises ConfigError for an option or variable the install cannot take.
      #
      # :name :: label results are stored under (default: the install's name, the options and the variables, joined by spaces)
      # :install :: a usable Install
      # :options :: interpreter options placed before the script, e.g. ["--yjit"] (default: [])
      # :env :: variables for the server process; a nil value unsets the variable (default: {})
      # :malloc :: "jemalloc" (LD_PRELOAD of the system's libjemalloc, see MallocLibrary), "glibc", or nil:
      #            whatever the ruby runs with; the identity check proves it in every server process (default: nil)
      # :malloc_library :: finds the jemalloc library (default: MallocLibrary; tests pass a fake)
      def initialize(install:, name: nil, options: [], env: {}, malloc: nil, malloc_library: MallocLibrary)
        @install = install
        @options = Array(options).map { |o| o.to_s.dup.freeze }.freeze
        @malloc = malloc&.to_s&.dup&.freeze
        given = env.to_h { |k, v| [k.to_s.dup.freeze, v.nil? ? nil : v.to_s.dup.freeze] }
        @name = (name || default_name(given)).to_s.dup.freeze
        validate!(given)
        @env = with_malloc(given, malloc_library).freeze
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
        hash = { name: name, ruby: install.name, path: install.path, options: options, env: env,
                 description: description }
        malloc ? hash.merge(malloc: malloc) : hash
      end

      def ==(other)
        other.is_a?(Variant) && other.to_h == to_h
      end
      alias eql? ==

      def hash
        to_h.hash
      end

      private

      def default_name(env)
        [install.name, *options, *env.map { |k, v| "#{k}=#{v}" }, *("malloc=#{malloc}" if malloc)].join(" ")
      end

      def validate!(env)
        options.each { |option| validate_option!(option) }
        env.each_key do |key|
          fail_config!("environment variable name #{key.inspect} is invalid (letters, digits and _)") unless key.match?(ENV_NAME)
        end
        return if malloc.nil?

        fail_config!("malloc #{malloc.inspect} is not one of #{MALLOCS.join(", ")}") unless MALLOCS.include?(malloc)
        if malloc == "glibc" && env["LD_PRELOAD"]
          fail_config!("malloc glibc preloads nothing, but env sets LD_PRELOAD=#{env["LD_PRELOAD"]}")
        end
        fail_config!("malloc #{malloc} needs CRuby, #{about_install} is #{install.engine}") if install.engine != "ruby"
      end

      # jemalloc goes first in LD_PRELOAD, before any library the variant's
      # env preloads itself; glibc unsets LD_PRELOAD (nothing may replace
      # malloc). The library must exist now: ld.so would only warn and run
      # the server with glibc's malloc.
      def with_malloc(env, library)
        case malloc
        when "jemalloc"
          path = library.jemalloc or fail_config!("malloc jemalloc: #{library.missing_text}")
          env.merge("LD_PRELOAD" => [path, env["LD_PRELOAD"]].compact.join(" ").freeze)
        when "glibc" then env.merge("LD_PRELOAD" => nil)
        else env
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
