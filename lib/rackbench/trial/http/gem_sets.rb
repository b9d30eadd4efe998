# frozen_string_literal: true

require "rubygems"

module Rackbench
  module Trial
    class Http < Kind
      # One set of gems per app and server in an experiment, so that
      # comparing rubies compares rubies and not Rails versions.
      #
      # The rubies of an experiment that run an app under a server (and its
      # pinned gems, `gems:`) share one set: the Bundler environment of the
      # oldest of them (by RUBY_VERSION; the experiment's order among equals)
      # resolves first, from the app's own Gemfile.lock when it has one;
      # every other ruby's environment then starts from that environment's
      # lockfile (BundleEnv's lock_seed), and after its `bundle install`
      # must lock every gem of the set at the set's version (GemSetCheck:
      # a native gem may be another platform's gem of that version, and a
      # source gem's build dependencies may come or go).
      # Resolving on the oldest ruby is what lets the others run the set:
      # gems raise their lowest ruby with new releases (Rails 8 needs 3.2)
      # far more often than they cap the highest.
      #
      # Rubies of another engine (JRuby) have sets of their own: their
      # server lines and platforms differ. `gems: per_ruby` gives every ruby
      # its own resolution, from the app's own Gemfile.lock when it has one
      # (the report then marks the gems that differ).
      class GemSets
        # What shares a set: the app, the server's adapter (its gem lines),
        # the ruby engine and the pinned gems.
        Key = Struct.new(:app, :adapter, :engine, :pins)

        # :configs :: the experiment's configurations that can run (Experiment::Config)
        # :variants :: label => Rubies::Variant
        # :per_ruby :: every ruby resolves on its own (default: false)
        def initialize(configs:, variants:, per_ruby: false)
          @variants = variants
          @per_ruby = per_ruby
          @bases = {}
          order = variants.keys
          configs.group_by { |config| key(config) }.each do |key, members|
            @bases[key] = members.map { |config| variants.fetch(config.ruby.label) }
                                 .min_by { |variant| [ruby_version(variant.install), order.index(variant.name) || 0] }
          end
        end

        def per_ruby?
          @per_ruby
        end

        # The Variant whose install resolves the set config belongs to; nil
        # with per_ruby, or for a configuration the sets were not made from.
        def base(config)
          return nil if per_ruby?

          @bases[key(config)]
        end

        # Whether config's ruby is its set's base (or has no set).
        def base?(config)
          variant = base(config)
          variant.nil? || GemSets.same_install?(variant.install, @variants.fetch(config.ruby.label).install)
        end

        # The configurations that need an environment each (one per app,
        # ruby install, server adapter and pins), the base of every set
        # before the other rubies of that set.
        def order(configs)
          unique = configs.uniq { |config| [key(config), install_key(config)] }
          unique.partition { |config| base?(config) }.flatten
        end

        # Lines that say how the gems of configs are resolved, for the
        # run's start: "rails-hello + puma: one gem set, resolved on ruby
        # (ruby 3.1.2), installed as is for r34".
        def describe(configs)
          return ["gems resolved by each ruby on its own (gems: per_ruby)"] if per_ruby?

          configs.group_by { |config| key(config) }.filter_map do |key, members|
            base = @bases[key]
            next nil unless base

            others = members.map { |c| @variants.fetch(c.ruby.label).install }
                            .reject { |install| GemSets.same_install?(install, base.install) }
                            .uniq { |install| [install.path, install.description] }
                            .sort_by { |install| ruby_version(install) }.map(&:name)
            pins = key.pins.map { |name, requirement| "#{name} #{requirement}" }
            what = "#{key.app} + #{key.adapter}#{" (#{pins.join(", ")})" unless pins.empty?}"
            where = others.empty? ? "" : ", installed as is for #{others.join(", ")}"
            "#{what}: one gem set, resolved on #{GemSets.ruby_name(base.install)}#{where}"
          end
        end

        # "r34 (ruby 3.4.5)": an install's name and its version.
        def self.ruby_name(install)
          version = install.description.to_s[/\A\S+ \S+/]
          version && version != install.name ? "#{install.name} (#{version})" : install.name.to_s
        end

        def self.same_install?(one, other)
          one.path == other.path && one.description == other.description
        end

        private

        def key(config)
          Key.new(config.app.name, config.server.name, @variants.fetch(config.ruby.label).install.engine,
                  (config.gems || {}).sort.to_h)
        end

        def install_key(config)
          install = @variants.fetch(config.ruby.label).install
          [install.path, install.description]
        end

        def ruby_version(install)
          Gem::Version.new(install.ruby_version || install.version || "0")
        rescue ArgumentError
          Gem::Version.new("0")
        end
      end
    end
  end
end
