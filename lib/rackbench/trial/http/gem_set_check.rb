# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # Whether a ruby's environment holds its gem set, and the words for
      # what differs (BundleEnv::LockComparison of the set's lock and the
      # ruby's).
      #
      # A set holds when every gem the servers can load has the same name
      # and version on every ruby. Two differences leave that true and are
      # said, not refused:
      #
      # * a gem locked at the set's version for another platform (the
      #   source gem compiled on one ruby, the precompiled gem on another);
      # * a gem only one of them locks because of such a platform: the
      #   source gem's build dependencies (mini_portile2).
      #
      # A gem locked at another version, or one the set locks that this
      # ruby does not for any such reason, refuses the environment, with
      # the gem, both versions and what to do. Gems the ruby adds for other
      # reasons (a Gemfile that asks for a gem on newer rubies only) are
      # said, as they were before platforms were told apart.
      #
      # An environment that resolves on its own (`gems: per_ruby`, or the
      # set's own ruby) is compared with the app's Gemfile.lock instead:
      # nothing is refused there, and #changes names what Bundler changed
      # of the app's lock on that ruby.
      class GemSetCheck
        # How many gems a line names before "and N more".
        SHOWN = 3

        # The words for the platforms a lock names for one gem: "source"
        # for the source gem ("ruby", compiled on install), else the
        # platforms ("x86_64-linux-gnu").
        def self.platform_text(platforms)
          names = Array(platforms).map { |p| p == BundleEnv::Lockfile::RUBY_PLATFORM_NAME ? "source" : p }
          names.empty? ? "source" : names.join(" and ")
        end

        # comparison :: BundleEnv::LockComparison of the set's lock (reference) and this ruby's
        # ruby :: the ruby's name for the words ("r34")
        # reference :: what the reference lock is, for the words (default: "the set")
        # force_ruby_platform :: the environment installs source gems only, whatever platforms its lock
        #                        also names (Bundler's lock under force_ruby_platform may list a gem's
        #                        precompiled variant beside the source gem) (default: false)
        def initialize(comparison, ruby:, reference: "the set", force_ruby_platform: false)
          @comparison = comparison
          @ruby = ruby
          @reference = reference
          @force_ruby_platform = force_ruby_platform
        end

        # The gems that break the set: version changes, then gems of the set
        # this ruby does not lock (not build dependencies).
        def breaks
          @breaks ||= @comparison.versions + @comparison.only_in_reference.reject(&:build_dependency?)
        end

        def holds?
          breaks.empty?
        end

        # Why the set does not hold, and what to do, in one line (without
        # the ruby and the app, which the caller's prefix names); nil when
        # it holds.
        def refusal
          return nil if holds?

          first = breaks.first
          more = breaks.size > 1 ? " (and #{more_text(breaks.drop(1).map(&:name))})" : ""
          "#{break_text(first)}#{more}; #{advice(first)}"
        end

        # Lines saying what this ruby runs otherwise than the set's ruby, and
        # why that keeps the set: platforms, build dependencies, and gems
        # it adds. [] when nothing differs.
        def notes
          [platform_note, build_note, added_note].compact
        end

        # Lines naming what this ruby changed of the reference (the app's
        # own lock): versions, gems it does not lock, platforms and build
        # dependencies. Gems it adds are not named: the server's gems and
        # the experiment's pins are added on purpose. [] when it kept the
        # lock as it is.
        def changes
          versions = @comparison.versions.map { |c| "#{c.name} #{c.other_version} (locked: #{c.reference_version})" }
          dropped = @comparison.only_in_reference.reject(&:build_dependency?).map { |g| "#{g.name} #{g.version}" }
          lines = []
          lines << "#{@ruby} changed #{@reference}: #{versions.join(", ")}" unless versions.empty?
          lines << "#{@ruby} does not lock #{dropped.join(", ")} of #{@reference}" unless dropped.empty?
          lines + [platform_note, build_note].compact
        end

        private

        def break_text(change)
          if change.respond_to?(:other_version)
            "it locks #{change.name} #{change.other_version} where the set has #{change.reference_version}"
          else
            "it does not lock #{change.name} (the set has #{change.version})"
          end
        end

        # To run one version everywhere: lock the ruby's platform gem into
        # the app's lock (when the ruby locks the gem for a platform the
        # set lacks), or pin the gem; else give up the set for that app.
        def advice(change)
          version = change.respond_to?(:reference_version) ? change.reference_version : change.version
          pin = "pin it to the set's version (gems: { #{change.name}: \"#{version}\" })"
          platform = added_platform(change)
          first = platform ? "lock #{@ruby}'s platform in the app (bundle lock --add-platform #{platform}) or #{pin}" : pin
          "to run one #{change.name} on every ruby, #{first}; or let each ruby resolve its own (gems: per_ruby)"
        end

        def added_platform(change)
          return nil unless change.respond_to?(:other_platforms)

          (Array(change.other_platforms) - Array(change.reference_platforms) -
            [BundleEnv::Lockfile::RUBY_PLATFORM_NAME]).first
        end

        def platform_note
          changes = platform_changes
          return nil if changes.empty?

          "#{@ruby} runs #{@reference}'s versions as other platforms: " +
            changes.map do |change|
              "#{change.name} #{change.version} #{platform_text(change.other_platforms)} " \
                "(#{@reference}: #{platform_text(change.reference_platforms)})"
            end.join(", ")
        end

        # The platform changes that change what is installed: with
        # force_ruby_platform, none where both locks name the source gem.
        def platform_changes
          source = BundleEnv::Lockfile::RUBY_PLATFORM_NAME
          @comparison.platforms.reject do |change|
            @force_ruby_platform && change.reference_platforms.include?(source) && change.other_platforms.include?(source)
          end
        end

        def build_note
          dropped = @comparison.only_in_reference.select(&:build_dependency?)
          added = @comparison.only_in_other.select(&:build_dependency?)
          parts = []
          parts << "leaves out #{gem_list(dropped)}, which #{@reference} needs only to compile #{dependents(dropped)} from source" unless dropped.empty?
          parts << "adds #{gem_list(added)}, which it needs only to compile #{dependents(added)} from source" unless added.empty?
          parts.empty? ? nil : "#{@ruby} #{parts.join(", and ")}"
        end

        def added_note
          added = @comparison.only_in_other.reject(&:build_dependency?)
          added.empty? ? nil : "#{@ruby} adds to the gem set: #{gem_list(added)}"
        end

        def gem_list(gems)
          gems.map { |gem| "#{gem.name} #{gem.version}" }.join(", ")
        end

        def dependents(gems)
          gems.flat_map(&:dependents).uniq.join(", ")
        end

        def platform_text(platforms)
          self.class.platform_text(platforms)
        end

        def more_text(names)
          shown = names.first(SHOWN).join(", ")
          names.size > SHOWN ? "#{names.size} more: #{shown}, ..." : "#{names.size} more: #{shown}"
        end
      end
    end
  end
end
