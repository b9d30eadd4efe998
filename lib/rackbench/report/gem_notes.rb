# frozen_string_literal: true

require_relative "gem_differences"

module Rackbench
  class Report
    # What differs between configurations of one app in their gems other
    # than a version (GemDifferences): notes, never flags. Pure functions
    # over ConfigSummary#gems and #gem_platforms.
    #
    # * "platform": a gem every configuration loaded at one version, built
    #   otherwise: the source gem compiled on one ruby, a precompiled gem on
    #   another (one gem set, whose lock names the source gem, installed by
    #   a newer Bundler that takes the platform gem of the same version).
    #   The same release runs; its C part was compiled elsewhere.
    # * "only_some": a gem in the bundles of some configurations of an app
    #   and not of others, where no dimension that chooses gems (app,
    #   server, gem.NAME) tells them apart: a source gem's build
    #   dependency (mini_portile2 beside the compiled nokogiri), or a gem a
    #   Gemfile adds on some rubies only.
    #
    # Each entry, in configuration order of its app:
    #
    #   {"kind" => "platform", "app" => "xml-app", "gem" => "nokogiri", "version" => "1.18.10",
    #    "platforms" => [{"platform" => "ruby", "configs" => [ids], "label" => "ruby"}, ...],
    #    "told_apart_by" => ["ruby"], "text" => "nokogiri 1.18.10: source on ruby, x86_64-linux-gnu on r33, r34"}
    #   {"kind" => "only_some", "app" => "xml-app", "gem" => "mini_portile2", "versions" => ["2.8.9"],
    #    "configs" => [ids], "label" => "ruby", "absent_configs" => [ids], "absent_label" => "r33, r34",
    #    "told_apart_by" => ["ruby"], "text" => "mini_portile2 2.8.9: in the bundle on ruby, not on r33, r34"}
    module GemNotes
      SOURCE = "ruby"

      module_function

      # The notes of +configs+ (ConfigSummary), platforms first.
      def of(configs)
        configs.group_by { |config| config.dims["app"] }.flat_map do |app, members|
          platforms(app, members) + only_some(app, members)
        end
      end

      # "source" for a gem compiled from its source gem, else the platform.
      def platform_text(platform)
        platform == SOURCE ? "source" : platform
      end

      def platforms(app, members)
        recorded = members.select(&:gem_platforms)
        names = recorded.flat_map { |config| config.gem_platforms.keys }.uniq.sort
        names.flat_map do |name|
          holders = recorded.select { |config| config.gems.key?(name) }
          holders.group_by { |config| config.gems[name] }.filter_map do |version, same|
            by_platform = same.group_by { |config| config.gem_platforms.fetch(name, SOURCE) }
            platform_entry(app, name, version, by_platform, members) if by_platform.size > 1
          end
        end
      end

      def platform_entry(app, name, version, by_platform, members)
        apart = GemDifferences.told_apart_by(by_platform.values, members)
        platforms = by_platform.map do |platform, configs|
          { "platform" => platform, "configs" => configs.map(&:id), "label" => GemDifferences.label(configs, apart) }
        end
        text = platforms.map { |p| "#{platform_text(p["platform"])} on #{p["label"]}" }.join(", ")
        { "kind" => "platform", "app" => app, "gem" => name, "version" => version, "platforms" => platforms,
          "told_apart_by" => apart, "text" => "#{name} #{version}: #{text}" }
      end

      def only_some(app, members)
        with_gems = members.reject { |config| config.gems.empty? }
        names = with_gems.flat_map { |config| config.gems.keys }.uniq.sort
        names.filter_map do |name|
          holders, absent = with_gems.partition { |config| config.gems.key?(name) }
          next if absent.empty?

          apart = GemDifferences.told_apart_by([holders, absent], members)
          next if apart.any? { |dim| GemDifferences.choosing?(dim) }

          only_some_entry(app, name, holders, absent, apart)
        end
      end

      def only_some_entry(app, name, holders, absent, apart)
        versions = holders.map { |config| config.gems[name] }.uniq
        label = GemDifferences.label(holders, apart)
        absent_label = GemDifferences.label(absent, apart)
        { "kind" => "only_some", "app" => app, "gem" => name, "versions" => versions,
          "configs" => holders.map(&:id), "label" => label, "absent_configs" => absent.map(&:id),
          "absent_label" => absent_label, "told_apart_by" => apart,
          "text" => "#{name} #{versions.join(", ")}: in the bundle on #{label}, not on #{absent_label}" }
      end

      private_class_method :platforms, :platform_entry, :only_some, :only_some_entry
    end
  end
end
