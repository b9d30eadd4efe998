# frozen_string_literal: true

module Rackbench
  class BundleEnv
    # Reads the gem versions out of a Gemfile.lock. A small parser of the
    # format rather than Bundler::LockfileParser, so the runner does not need
    # Bundler loaded (and a lockfile written by another ruby's Bundler
    # version parses the same).
    #
    # The parts it reads: top-level sections (GEM, PATH, GIT, ...) each with
    # a "  specs:" block of "    name (version)" or "    name
    # (version-platform)" lines (dependencies sit deeper, at six spaces),
    # and "BUNDLED WITH" followed by the Bundler version.
    module Lockfile
      SPEC = /\A {4}(?<name>[^ (]+) \((?<version>[^-)]+)(?:-(?<platform>[^)]+))?\)\s*\z/.freeze
      SOURCE_SECTIONS = %w[GEM PATH GIT PLUGIN\ SOURCE].freeze

      # Hash of gem name => version ("6.6.1"; a platform suffix such as
      # "-java" is dropped), sorted by name, plus "bundler" => the BUNDLED
      # WITH version unless a bundler gem is locked.
      def self.gem_versions(text)
        versions = {}
        section = nil
        text.each_line do |line|
          if line.match?(/\A[A-Z]/)
            section = line.strip
          elsif SOURCE_SECTIONS.include?(section) && (match = SPEC.match(line))
            versions[match[:name]] ||= match[:version]
          elsif section == "BUNDLED WITH" && !line.strip.empty?
            versions["bundler"] ||= line.strip
          end
        end
        versions.sort.to_h
      end

      # Bundler's name for the platform of a gem locked without a suffix:
      # the source gem (a native one is compiled on install) or a pure-Ruby gem.
      RUBY_PLATFORM_NAME = "ruby"

      # Hash of gem name => the platforms it is locked for, sorted ("ruby"
      # for an entry without a suffix: "nokogiri (1.18.10)" is the source
      # gem, "nokogiri (1.18.10-x86_64-linux-gnu)" the precompiled one). A
      # lock written for several platforms holds several entries of one
      # gem, all at one version.
      def self.gem_platforms(text)
        platforms = Hash.new { |hash, name| hash[name] = [] }
        section = nil
        text.each_line do |line|
          if line.match?(/\A[A-Z]/)
            section = line.strip
          elsif SOURCE_SECTIONS.include?(section) && (match = SPEC.match(line))
            platforms[match[:name]] << (match[:platform] || RUBY_PLATFORM_NAME)
          end
        end
        platforms.sort.to_h { |name, list| [name, list.uniq.sort] }
      end

      DEPENDENCY = /\A {6}(?<name>[^ (]+)/.freeze
      DEPENDENCIES_ENTRY = /\A {2}(?<name>[^ (!\n]+)/.freeze

      # Hash of locked gem name => names of the gems it depends on (from
      # the six-space lines below its spec).
      def self.dependencies(text)
        graph = {}
        section = nil
        current = nil
        text.each_line do |line|
          if line.match?(/\A[A-Z]/)
            section = line.strip
            current = nil
          elsif SOURCE_SECTIONS.include?(section) && (match = SPEC.match(line))
            current = (graph[match[:name]] ||= [])
          elsif current && (match = DEPENDENCY.match(line))
            current << match[:name]
          end
        end
        graph
      end

      # The names in +roots+ and every locked gem whose dependencies reach
      # one of them.
      def self.dependents(text, roots)
        graph = dependencies(text)
        reached = roots.to_a.uniq
        loop do
          more = graph.keys.reject { |name| reached.include?(name) }
                      .select { |name| graph[name].any? { |dep| reached.include?(dep) } }
          return reached if more.empty?

          reached.concat(more)
        end
      end

      # The lockfile text without its PLATFORMS section (header, entries and
      # the blank line after them): Bundler then locks the platform it runs
      # on. A sibling's platforms are its own resolution's: Bundler 2.5.22,
      # given a lock whose platforms were all other than its own (x86_64-linux-gnu
      # and aarch64 variants, without x86_64-linux or ruby), resolved for no
      # platform at all and wrote a lock with no gems, which `bundle check`
      # called satisfied and the server's Bundler.setup then refused.
      def self.without_platforms(text)
        text.sub(/^PLATFORMS\n(?: {2}\S.*\n)*\n?/, "")
      end

      # The lockfile text without the specs (and DEPENDENCIES entries) of
      # the gems named in +names+.
      def self.without(text, names)
        section = nil
        dropping = false
        kept = text.each_line.reject do |line|
          if line.match?(/\A[A-Z]/)
            section = line.strip
            dropping = false
          elsif SOURCE_SECTIONS.include?(section) && (match = SPEC.match(line))
            dropping = names.include?(match[:name])
          elsif SOURCE_SECTIONS.include?(section) && DEPENDENCY.match?(line)
            dropping
          elsif section == "DEPENDENCIES" && (match = DEPENDENCIES_ENTRY.match(line))
            names.include?(match[:name])
          else
            false
          end
        end
        kept.join
      end
    end
  end
end
