# frozen_string_literal: true

require "rubygems"

module Rackbench
  class Experiment
    # The experiment's +gems+ key: how an app's gems are resolved across the
    # experiment's rubies, and the gem versions it pins or varies.
    #
    #   gems: per_ruby                                  # each ruby resolves the app's gems on its own
    #   gems: { rails: "~> 7.2.0" }                     # a pin, in every environment
    #   gems: { rails: ["~> 7.1.0", "~> 8.0.0"] }       # a dimension, gem.rails
    #   gems: { per_ruby: true, rails: "~> 7.2.0" }     # both
    #   gems: { force_ruby_platform: true }             # every native gem compiled from source, on every ruby
    #
    # Without the key (or with +shared+), each app and server has one gem
    # set per experiment, resolved on the oldest of its rubies and installed
    # as is into every other (Trial::Http::GemSets). A gem with a list of
    # more than one requirement is a dimension named "gem.NAME", as load and
    # env keys are; one requirement is a pin, no dimension.
    #
    # Requirements are RubyGems' ("~> 7.2.0", ">= 7.1, < 8", "7.2.2"),
    # normalized so that spellings of one requirement are one value: each
    # part "OP VERSION" (an exact version as the bare version), parts joined
    # by ", ".
    #
    # force_ruby_platform is Bundler's setting of that name, in every
    # environment of the experiment: a native gem is installed from its
    # source gem and compiled on each ruby, never as a precompiled platform
    # gem. Without it, one gem set may run a native gem compiled on one
    # ruby and precompiled on another (the same version: the reports note
    # the platforms); with it, every ruby builds the same source.
    class Gems
      SHARED = "shared"
      PER_RUBY = "per_ruby"
      RESOLVE_MODES = [SHARED, PER_RUBY].freeze
      # RubyGems' own rule for a gem name (Gem::Specification#validate).
      NAME = /\A[A-Za-z0-9][A-Za-z0-9._-]*\z/
      DIMENSION_PREFIX = "gem."
      FORCE_RUBY_PLATFORM = "force_ruby_platform"

      # "shared" or "per_ruby".
      attr_reader :resolve
      # Hash of gem name => Array of normalized requirements (a list of one
      # is a pin).
      attr_reader :pins
      # true: every environment installs native gems from source (Bundler's force_ruby_platform).
      attr_reader :force_ruby_platform

      # The Gems of the file's +gems+ value, or nil when the key is absent.
      # Raises ConfigError naming the key.
      def self.parse(value, checker, key = "gems")
        return nil if value.nil?
        return new(resolve: checker.one_of!(value, key, RESOLVE_MODES, "gems mode", note: MAPPING_NOTE)) if value.is_a?(String)

        checker.mapping!(value, key)
        checker.fail!(key, "must name at least one gem (or be per_ruby)") if value.empty?
        resolve = SHARED
        force = false
        pins = {}
        value.each do |name, requirements|
          name = name.to_s
          gem_key = "#{key}.#{name}"
          if name == PER_RUBY
            resolve = checker.boolean!(requirements, gem_key) ? PER_RUBY : SHARED
            next
          end
          if name == FORCE_RUBY_PLATFORM
            force = checker.boolean!(requirements, gem_key)
            next
          end
          checker.fail!(gem_key, "#{name.inspect} is not a gem name") unless NAME.match?(name)
          pins[name] = checker.list!(requirements, gem_key) { |req, req_key| requirement(req, req_key, checker) }.freeze
        end
        new(resolve: resolve, pins: pins, force_ruby_platform: force)
      end

      MAPPING_NOTE = "or a mapping of gem name => requirement(s), e.g. { rails: [\"~> 7.2.0\", \"~> 8.0.0\"] }"
      private_constant :MAPPING_NOTE

      # The normalized form of one requirement written in the file.
      def self.requirement(value, key, checker)
        unless value.is_a?(String)
          checker.fail!(key, "must be a requirement string such as \"~> 7.2.0\" (quoted), got #{checker.describe(value)}")
        end
        parts = value.split(",").map(&:strip)
        checker.fail!(key, "must be a requirement such as \"~> 7.2.0\", got #{value.inspect}") if parts.any?(&:empty?)
        normalized = parts.map do |part|
          op, version = Gem::Requirement.parse(part)
          op == "=" ? version.to_s : "#{op} #{version}"
        rescue Gem::Requirement::BadRequirementError
          checker.fail!(key, "#{part.inspect} is not a gem requirement (such as \"~> 7.2.0\", \">= 7.1\", \"7.2.2\")")
        end
        -normalized.join(", ")
      end

      # The parts of a normalized requirement, as a Gemfile's `gem` takes
      # them: "~> 7.2.0, < 7.2.3" => ["~> 7.2.0", "< 7.2.3"].
      def self.parts(requirement)
        requirement.split(", ")
      end

      # Whether +version+ (a String) satisfies +requirement+ (normalized).
      def self.satisfied?(requirement, version)
        Gem::Requirement.new(*parts(requirement)).satisfied_by?(Gem::Version.new(version))
      rescue ArgumentError
        false
      end

      def initialize(resolve: SHARED, pins: {}, force_ruby_platform: false)
        @resolve = resolve.dup.freeze
        @pins = pins.transform_values { |values| values.dup.freeze }.freeze
        @force_ruby_platform = force_ruby_platform == true
        freeze
      end

      alias force_ruby_platform? force_ruby_platform

      def per_ruby?
        resolve == PER_RUBY
      end

      # "gem.rails" => its requirements, for each gem with more than one.
      def dimensions
        pins.select { |_, values| values.size > 1 }.to_h { |name, values| ["#{DIMENSION_PREFIX}#{name}", values] }
      end

      # The pins of one configuration: gem name => requirement, its own
      # value of each dimension (from +dims+) and every single pin.
      def pins_for(dims)
        pins.to_h { |name, values| [name, dims.fetch("#{DIMENSION_PREFIX}#{name}") { values.first }] }
      end

      # For the fingerprint: only what differs from the default (shared,
      # nothing pinned, platform gems allowed) appears, so `gems: shared` is
      # the same experiment as no key at all.
      def canonical
        data = {}
        data["resolve"] = resolve if per_ruby?
        data["pins"] = pins.transform_values(&:sort) unless pins.empty?
        data[FORCE_RUBY_PLATFORM] = true if force_ruby_platform?
        data.empty? ? nil : data
      end
    end
  end
end
