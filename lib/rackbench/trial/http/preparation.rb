# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # Checks every configuration's RUBY_GC_* variables against its ruby
      # (GcSettingsCheck), then installs the Bundler environment of every
      # (app, ruby, server) the trials need, each gem set's own first
      # (GemSets), and says how the gems are resolved. Raises SetupError,
      # before any trial, for a GC variable a ruby does not take, and for
      # an environment that does not install or does not hold its set's
      # versions.
      def prepare(trials)
        configs = gem_sets.order(trials.map(&:config))
        return if configs.empty?

        GcSettingsCheck.new(variants: @context.variants, parent_env: @context.parent_env, run: @gc_run).check!(configs)

        gem_sets.describe(configs).each { |line| @context.out.puts "Gems: #{line}" }
        if force_ruby_platform?
          @context.out.puts "Gems: every native gem compiled from its source on every ruby (force_ruby_platform)"
        end
        configs.each do |config|
          variant = @context.variants.fetch(config.ruby.label)
          bundle_for(config, App.resolve(config.app), variant, Servers.fetch(config.server.name))
        end
      end

      private

      # The installed Bundler environment of config's app, ruby and server:
      # its gem set's lock installed for this ruby, after the set's own
      # environment (on the set's base ruby) was installed.
      def bundle_for(config, app, variant, adapter)
        pins = config.gems || {}
        base = gem_sets.base(config)
        force = { force_ruby_platform: force_ruby_platform? }
        set = if base && !GemSets.same_install?(base.install, variant.install)
                @bundles.fetch(app, base.install, adapter, log_dir: @context.logs_dir, pins: pins, **force)
              end
        @bundles.fetch(app, variant.install, adapter, log_dir: @context.logs_dir, pins: pins, set: set, **force)
      end

      # `gems: { force_ruby_platform: true }`: every environment installs
      # native gems from source.
      def force_ruby_platform?
        source.respond_to?(:gems_force_ruby_platform?) && source.gems_force_ruby_platform?
      end

      # The experiment's gem sets, made from every configuration that can
      # run (whatever is left to run: a resumed run keeps the sets of the
      # first), those of the experiment a step was derived from included.
      def gem_sets
        @gem_sets ||= begin
          variants = @context.variants
          all = source.respond_to?(:gem_set_configurations) ? source.gem_set_configurations : source.configurations_for(variants)
          configs = all.select do |config|
            variant = variants[config.ruby.label]
            variant && unsupported_reason(config, variant).nil?
          end
          per_ruby = source.respond_to?(:gems_per_ruby?) && source.gems_per_ruby?
          GemSets.new(configs: configs, variants: variants, per_ruby: per_ruby)
        end
      end
    end
  end
end
