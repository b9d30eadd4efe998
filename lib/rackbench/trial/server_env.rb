# frozen_string_literal: true

module Rackbench
  module Trial
    # The whole environment of a trial's server (and of its app's setup
    # step): built from named sources only, never inherited from the shell
    # that started rackbench. A user's exported RAILS_ENV=development,
    # RUBY_YJIT_ENABLE=1 or LD_PRELOAD would otherwise change what runs
    # behind every label, silently. doc/servers.md lists every variable and
    # its source.
    #
    # Sources, each overriding the ones before it:
    #   machine    :: PATH (as before any `bundle exec`), HOME, USER, LOGNAME,
    #                 LANG, LANGUAGE, LC_*, TZ, TMPDIR from the shell
    #   bundle     :: BUNDLE_GEMFILE, BUNDLE_PATH, BUNDLE_APP_CONFIG, BUNDLE_FROZEN
    #   rackbench  :: RACK_ENV=production, RAILS_ENV=production
    #   server     :: what the adapter needs
    #   app        :: the app's env (app.yml or the experiment's app entry)
    #   ruby       :: the ruby variant's env (nil unsets)
    #   experiment :: the experiment's env for this configuration
    #   pass_env   :: variables the experiment names in pass_env, from the shell
    #   trial      :: RACKBENCH_* markers, the channel to the server's
    #                 processes, and the list of checked variables the
    #                 identity agent reports (RACKBENCH_IDENTITY_ENV)
    #
    # RACK_ENV and RAILS_ENV move together: set one of them (app, ruby or
    # experiment) and the other follows, so a Rails app never runs in one
    # environment while its server reports another.
    class ServerEnv
      # Names the checked variables for the identity agent in every server
      # process (agent/identity.rb reports their values).
      CHECKED_LIST_VAR = "RACKBENCH_IDENTITY_ENV"
      MACHINE_NAMES = %w[PATH HOME USER LOGNAME LANG LANGUAGE TZ TMPDIR].freeze
      MACHINE_PATTERN = /\ALC_[A-Z_]+\z/
      DEFAULTS = { "RACK_ENV" => "production", "RAILS_ENV" => "production" }.freeze
      PAIRED = %w[RACK_ENV RAILS_ENV].freeze
      # Sources a user chose; the identity check verifies every variable
      # they set inside the running server.
      USER_SOURCES = %w[app ruby experiment].freeze

      # name => [value, source]
      attr_reader :entries

      # :parent :: the shell's environment (ENV)
      # :bundle :: the trial's BundleEnv (or anything with #bundle_variables), or nil
      # :server_env :: the adapter's variables
      # :app_env, :ruby_env, :experiment_env :: Hash name => value (nil unsets, for ruby_env)
      # :pass_env :: names to take from parent (default: [])
      # :trial_env :: rackbench's own markers, always last (default: {})
      # :also_check :: more names the identity check verifies, set or not:
      #                those any other variant, app or configuration of the
      #                experiment sets, so a trial proves it runs without
      #                them (default: [])
      def initialize(parent:, bundle:, server_env: {}, app_env: {}, ruby_env: {}, experiment_env: {}, pass_env: [],
                     trial_env: {}, also_check: [])
        @entries = {}
        @user_names = []
        machine(parent)
        layer(bundle ? bundle.bundle_variables : {}, "bundle")
        layer(DEFAULTS, "rackbench")
        layer(server_env, "server")
        user = { "app" => app_env, "ruby" => ruby_env, "experiment" => experiment_env }
        user.each { |source, vars| layer(vars, source) }
        pair_rack_and_rails(user)
        pass(parent, pass_env)
        @checked = (PAIRED + @user_names + (also_check - pass_env)).uniq.to_h { |name| [name, self[name]] }.freeze
        # The identity agent in every server process reports these names.
        layer(trial_env.merge(CHECKED_LIST_VAR => @checked.keys.join(",")), "trial")
        @entries.freeze
        freeze
      end

      # The variables as Process.spawn takes them with unsetenv_others:
      # true (String => String).
      def to_h
        @entries.transform_values(&:first)
      end

      def [](name)
        @entries.dig(name, 0)
      end

      # name => source, for the trial's record and doc/servers.md.
      def sources
        @entries.transform_values(&:last)
      end

      # The variables whose values the identity check compares inside the
      # server: RACK_ENV and RAILS_ENV always, everything a ruby variant,
      # the app or the experiment set, and the also_check names (nil: must
      # be unset). Values taken from the shell with pass_env are left out:
      # they may be secrets, and the user vouched for them.
      attr_reader :checked

      private

      def machine(parent)
        clean = Rubies::CleanEnv.clean(parent)
        clean.each do |name, value|
          next unless MACHINE_NAMES.include?(name) || name.match?(MACHINE_PATTERN)

          @entries[name] = [value, "machine"]
        end
      end

      def layer(vars, source)
        vars.each do |name, value|
          name = name.to_s
          @user_names << name if USER_SOURCES.include?(source)
          if value.nil?
            @entries.delete(name)
          else
            @entries[name] = [value.to_s, source]
          end
        end
      end

      # One of the pair set by a user source and the other not: the other
      # follows it.
      def pair_rack_and_rails(user)
        set = user.values.flat_map { |vars| vars.keys.map(&:to_s) } & PAIRED
        return unless set.size == 1

        given = set.first
        other = (PAIRED - [given]).first
        value = self[given]
        return @entries.delete(other) if value.nil?

        @entries[other] = [value, "follows #{given}"]
      end

      def pass(parent, names)
        names.each do |name|
          value = parent[name]
          @entries[name] = [value, "pass_env"] unless value.nil?
        end
      end
    end
  end
end
