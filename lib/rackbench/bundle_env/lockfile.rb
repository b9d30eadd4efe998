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
    end
  end
end
