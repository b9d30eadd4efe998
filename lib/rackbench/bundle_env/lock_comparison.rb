# frozen_string_literal: true

module Rackbench
  class BundleEnv
    # What differs between two Gemfile.locks of one app: a reference (the
    # gem set's lock, or the app's own Gemfile.lock) and another (a ruby's
    # environment that started from it). Pure: it reads lock texts only.
    #
    # Three kinds of difference, which mean different things:
    #
    # * a version: a gem both lock at different versions. The two rubies
    #   would run different code (#versions).
    # * a platform: a gem both lock at the same version, as another
    #   platform ("nokogiri (1.18.10)", the source gem compiled on install,
    #   against "nokogiri (1.18.10-x86_64-linux-gnu)", precompiled). The
    #   same release of the same code; only how its C part was built
    #   differs. A lock written by an older Bundler (2.3 cannot install
    #   nokogiri's "-gnu" gems, which need RubyGems 3.3.22) or for another
    #   machine gets the source gem; a newer Bundler installs the
    #   precompiled one for the same version (#platforms).
    # * a gem only one of them locks (#only_in_reference, #only_in_other).
    #   When every gem that depends on it is locked by both at the same
    #   version and, in the other lock, does not depend on it, it is there
    #   only because of one platform's gem: the source gem's build tools
    #   (mini_portile2, which nokogiri's source gem depends on to compile
    #   libxml2; the precompiled gem needs none). Such a gem is a
    #   #build_dependency?; any other is a gem one ruby's Gemfile resolved
    #   and the other's did not.
    #
    # Bundler's own version (BUNDLED WITH) is each ruby's, never compared.
    class LockComparison
      # A gem one lock has and the other has not: its version there, and
      # the gems of that lock that depend on it (names).
      OneSided = Struct.new(:name, :version, :dependents, :build_dependency, keyword_init: true) do
        alias_method :build_dependency?, :build_dependency
      end
      # A gem both lock at one version for other platforms.
      PlatformChange = Struct.new(:name, :version, :reference_platforms, :other_platforms, keyword_init: true)
      # A gem both lock at different versions, with each side's platforms.
      VersionChange = Struct.new(:name, :reference_version, :other_version, :reference_platforms, :other_platforms,
                                 keyword_init: true)

      IGNORED = %w[bundler].freeze

      def initialize(reference_text, other_text)
        @reference = side(reference_text)
        @other = side(other_text)
      end

      # The gems both lock at different versions, by name (VersionChange).
      def versions
        common.filter_map do |name|
          ref = @reference[:versions][name]
          other = @other[:versions][name]
          next if ref == other

          VersionChange.new(name: name, reference_version: ref, other_version: other,
                            reference_platforms: @reference[:platforms][name], other_platforms: @other[:platforms][name])
        end
      end

      # The gems both lock at one version for other platforms (PlatformChange).
      def platforms
        common.filter_map do |name|
          ref = @reference[:platforms][name]
          other = @other[:platforms][name]
          next if @reference[:versions][name] != @other[:versions][name] || ref == other

          PlatformChange.new(name: name, version: @reference[:versions][name], reference_platforms: ref,
                             other_platforms: other)
        end
      end

      # The gems only the reference locks (OneSided), by name.
      def only_in_reference
        @only_in_reference ||= one_sided(@reference, @other)
      end

      # The gems only the other locks (OneSided), by name.
      def only_in_other
        @only_in_other ||= one_sided(@other, @reference)
      end

      # Whether the two locks hold every gem they both lock at one version,
      # and lack nothing of each other's but build dependencies.
      def same_versions?
        versions.empty? && (only_in_reference + only_in_other).all?(&:build_dependency?)
      end

      private

      def side(text)
        { versions: Lockfile.gem_versions(text).except(*IGNORED), platforms: Lockfile.gem_platforms(text),
          dependencies: Lockfile.dependencies(text) }
      end

      def common
        (@reference[:versions].keys & @other[:versions].keys).sort
      end

      # The gems +mine+ locks and +theirs+ does not. A gem is a build
      # dependency when something depends on it and every dependent is
      # either locked by both at one version without depending on it in
      # +theirs+ (the dependency belongs to this lock's platform of that
      # gem), or a build dependency itself (its own build tools).
      def one_sided(mine, theirs)
        names = (mine[:versions].keys - theirs[:versions].keys).sort
        dependents = names.to_h do |name|
          [name, mine[:dependencies].select { |_, deps| deps.include?(name) }.keys.sort]
        end
        build = []
        loop do
          more = names.reject { |name| build.include?(name) }.select do |name|
            !dependents[name].empty? && dependents[name].all? do |dependent|
              build.include?(dependent) || platform_only_dependency?(dependent, name, mine, theirs)
            end
          end
          break if more.empty?

          build.concat(more)
        end
        names.map do |name|
          OneSided.new(name: name, version: mine[:versions][name], dependents: dependents[name],
                       build_dependency: build.include?(name))
        end
      end

      def platform_only_dependency?(dependent, name, mine, theirs)
        version = mine[:versions][dependent]
        version && theirs[:versions][dependent] == version &&
          mine[:platforms][dependent] != theirs[:platforms][dependent] &&
          !Array(theirs[:dependencies][dependent]).include?(name)
      end
    end
  end
end
