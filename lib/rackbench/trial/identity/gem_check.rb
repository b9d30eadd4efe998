# frozen_string_literal: true

module Rackbench
  module Trial
    module Identity
      # The gem part of the identity check (Comparison): what one process
      # reported of its gems against what its bundle locks and its trial
      # asks for. Each method returns the differences' words ([] or nil
      # when there are none), or the record's value.
      #
      # What is compared is what runs: each gem's name and version, as
      # Gem.loaded_specs has it. How a native gem was built (the source gem
      # compiled on this ruby, or a precompiled platform gem) is recorded,
      # and compared only when the bundle sets force_ruby_platform: then
      # every native gem must be the source gem.
      class GemCheck
        # expectation :: the trial's Expectation
        def initialize(expectation)
          @expected = expectation
        end

        # The differences of one process's report, as words.
        def differences(report)
          [*pin_differences(report), *loaded_differences(report), force_ruby_platform_difference(report),
           *platform_differences(report)].compact
        end

        # Every gem the trial pins is loaded, at a version that satisfies
        # the pin.
        def pin_differences(report)
          pins = @expected.gem_pins || {}
          return [] if pins.empty?

          loaded = report["gems"] || {}
          pins.filter_map do |name, requirement|
            version = loaded[name]
            next "does not load #{name}, the trial pins #{name} #{requirement}" unless version
            next nil if Experiment::Gems.satisfied?(requirement, version)

            "loads #{name} #{version}, the trial pins #{name} #{requirement}"
          end
        end

        # The gems the process loaded are the bundle's locked versions (a
        # gem the bundle does not lock, such as a default gem the ruby
        # activated before Bundler, is the ruby's, not the bundle's).
        def loaded_differences(report)
          locked = @expected.gems
          return [] unless locked

          loaded = report["gems"]
          return ["reported no loaded gems (Gem.loaded_specs)"] unless loaded.is_a?(Hash)

          loaded.filter_map do |name, version|
            want = locked[name]
            "loads #{name} #{version}, the bundle locks #{want}" if want && want != version
          end
        end

        # Bundler inside the process has the bundle's force_ruby_platform.
        def force_ruby_platform_difference(report)
          want = @expected.force_ruby_platform
          return nil if want.nil?

          got = report["force_ruby_platform"]
          return nil if got == want
          return "Bundler is not loaded, the bundle sets force_ruby_platform #{want}" if got.nil?

          "Bundler's force_ruby_platform is #{got}, the bundle sets #{want}"
        end

        # With force_ruby_platform, every native gem is a source gem
        # compiled on this ruby: none loaded as a precompiled platform gem.
        def platform_differences(report)
          return [] unless @expected.force_ruby_platform

          Hash(report["gem_platforms"]).reject { |_, platform| platform == "ruby" }.map do |name, platform|
            "loads #{name} #{Hash(report["gems"])[name]} as the #{platform} gem, the bundle sets force_ruby_platform " \
              "(every native gem compiled from source)"
          end
        end

        # The bundle's gems as the process loaded them (name => version),
        # for the record; nil for a trial without a bundle.
        def bundle_gems(report)
          locked = @expected.gems
          return nil unless locked && report["gems"].is_a?(Hash)

          report["gems"].select { |name, _| locked.key?(name) }.sort.to_h
        end

        # How the bundle's native gems the process loaded were built (name
        # => "ruby" for compiled from source, else the precompiled gem's
        # platform), for the record; nil for a trial without a bundle.
        def bundle_gem_platforms(report)
          locked = @expected.gems
          return nil unless locked && report["gem_platforms"].is_a?(Hash)

          report["gem_platforms"].select { |name, _| locked.key?(name) }.sort.to_h
        end
      end
    end
  end
end
