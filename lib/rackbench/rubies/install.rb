# frozen_string_literal: true

require_relative "../field_equality"
require_relative "../deep_freeze"

module Rackbench
  module Rubies
    # One Ruby installation as found and described by Rubies.discover. A
    # frozen value; #error is set (and the descriptive fields may be nil)
    # when the interpreter could not be run.
    #
    # name :: unique label: "ruby"/"jruby" for the PATH ones, else "<engine>-<version>"
    # path :: real path of the file rackbench execs: the file named, for a
    #         ruby given by path; the interpreter behind it, for one found
    #         through PATH or a version manager (see doc/rubies.md)
    # exe :: real path of what the kernel runs once path is exec'd
    #        (/proc/self/exe): path itself for a CRuby binary, the ruby a
    #        wrapper script execs, the JVM for JRuby
    # libruby :: real path of the libruby shared object mapped into the
    #            process, or nil (a static build, JRuby)
    # engine :: "ruby", "jruby" or "truffleruby"
    # version :: the engine's version: "3.1.2" for CRuby, "9.3.9.0" for JRuby
    # ruby_version :: the Ruby language version it implements (RUBY_VERSION)
    # abi_version :: RbConfig's ruby_version ("3.1.0"): gems with native code are built per ABI
    # description :: RUBY_DESCRIPTION
    # platform :: RUBY_PLATFORM
    # jit :: JITs it supports: "yjit", "mjit", "rjit" (CRuby), "jvm" (JRuby), "graal" (TruffleRuby)
    # source :: where it was found: :path, :rbenv, :chruby, :asdf, :mise, :rvm, :explicit, or :build (built from source)
    # bundler_version, bundler_bin :: its own Bundler and the `bundle` script to run with it, or nil
    # error :: why it could not be described, or nil
    # recipe :: for a ruby built from source (source :build), the build's record (Build::Recipe#to_h plus
    #           the version, prefix, time and duration of the build: doc/rubies.md), else nil
    class Install
      include FieldEquality
      FIELDS = %i[name path exe libruby engine version ruby_version abi_version description platform
                  jit source bundler_version bundler_bin error recipe].freeze

      attr_reader(*FIELDS)

      def initialize(name:, path:, source:, exe: nil, libruby: nil, engine: nil, version: nil, ruby_version: nil,
                     abi_version: nil, description: nil, platform: nil, jit: [], bundler_version: nil,
                     bundler_bin: nil, error: nil, recipe: nil)
        @name = name.to_s.dup.freeze
        @path = path.to_s.dup.freeze
        @exe = exe&.dup&.freeze
        @libruby = libruby&.dup&.freeze
        @source = source.to_sym
        @engine = engine&.dup&.freeze
        @version = version&.dup&.freeze
        @ruby_version = ruby_version&.dup&.freeze
        @abi_version = abi_version&.dup&.freeze
        @description = description&.dup&.freeze
        @platform = platform&.dup&.freeze
        @jit = jit.map { |j| j.to_s.dup.freeze }.freeze
        @bundler_version = bundler_version&.dup&.freeze
        @bundler_bin = bundler_bin&.dup&.freeze
        @error = error&.dup&.freeze
        @recipe = recipe && DeepFreeze.call(recipe)
        freeze
      end

      # A copy with some fields changed.
      def with(**changes)
        self.class.new(**to_h.merge(changes))
      end

      # True when the interpreter ran and described itself.
      def usable?
        error.nil?
      end

      # "<engine>-<version>", whatever the install's name.
      def id
        "#{engine}-#{version}" if usable?
      end

      # What runs, as discovery deduplicates by: the file exec'd, the
      # process image and libruby it ends up as, and the description. Two
      # installs differ when any of these does, however alike their
      # versions or RbConfig.ruby.
      def identity
        [path, exe, libruby, description]
      end

      def jit?(name)
        jit.include?(name.to_s)
      end

      def inspect
        "#<#{self.class.name} #{name} #{path}#{" error=#{error.inspect}" if error}>"
      end
    end
  end
end
