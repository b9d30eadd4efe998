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
    #   configuration :: RAILS_MAX_THREADS and RAILS_MIN_THREADS = the trial's
    #                 threads, WEB_CONCURRENCY = its processes (when the
    #                 trial has them), so that Rails' database pool and an
    #                 app's own config/puma.rb follow the configuration
    #   server     :: what the adapter needs
    #   services   :: where the app's services answer (DATABASE_URL, REDIS_URL,
    #                 MEMCACHE_SERVERS: Services::Group#env)
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
      # The variables that follow the trial's threads and processes. Rails
      # reads RAILS_MAX_THREADS for its database pool (the default
      # database.yml: `pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>`)
      # and, with RAILS_MIN_THREADS, for Puma's threads in the default
      # config/puma.rb; MIN is set to the same value so that a pool never
      # shrinks below the threads. WEB_CONCURRENCY is the conventional
      # worker count. An app, a ruby variant or the experiment that sets one
      # of them wins.
      THREADS_VARS = %w[RAILS_MAX_THREADS RAILS_MIN_THREADS].freeze
      PROCESSES_VAR = "WEB_CONCURRENCY"
      # Sources a user chose; the identity check verifies every variable
      # they set inside the running server.
      USER_SOURCES = %w[app ruby experiment].freeze

      # name => [value, source]
      attr_reader :entries

      # :parent :: the shell's environment (ENV)
      # :bundle :: the trial's BundleEnv (or anything with #bundle_variables), or nil
      # :server_env :: the adapter's variables
      # :service_env :: the app's services' variables (default: {})
      # :app_env, :ruby_env, :experiment_env :: Hash name => value (nil unsets, for ruby_env)
      # :pass_env :: names to take from parent (default: [])
      # :trial_env :: rackbench's own markers, always last (default: {})
      # :also_check :: more names the identity check verifies, set or not:
      #                those any other variant, app or configuration of the
      #                experiment sets, so a trial proves it runs without
      #                them (default: [])
      # :threads, :processes :: the trial's threads per process and
      #                processes (Integer), or nil when the trial has none
      #                (a benchmark script): see THREADS_VARS (default: nil)
      def initialize(parent:, bundle:, server_env: {}, service_env: {}, app_env: {}, ruby_env: {}, experiment_env: {},
                     pass_env: [], trial_env: {}, also_check: [], threads: nil, processes: nil)
        @entries = {}
        @user_names = []
        machine(parent)
        layer(bundle ? bundle.bundle_variables : {}, "bundle")
        layer(DEFAULTS, "rackbench")
        concurrency = self.class.concurrency_variables(threads: threads, processes: processes)
        layer(concurrency, "configuration")
        layer(server_env, "server")
        layer(service_env, "services")
        user = { "app" => app_env, "ruby" => ruby_env, "experiment" => experiment_env }
        user.each { |source, vars| layer(vars, source) }
        pair_rack_and_rails(user)
        pass(parent, pass_env)
        # The concurrency and service variables are checked (and so reported
        # from inside the server) whenever the trial sets them, whoever won.
        checked_names = PAIRED + concurrency.keys + service_env.keys.map(&:to_s) + @user_names + (also_check - pass_env)
        @checked = checked_names.uniq.to_h { |name| [name, self[name]] }.freeze
        # The identity agent in every server process reports these names.
        layer(trial_env.merge(CHECKED_LIST_VAR => @checked.keys.join(",")), "trial")
        @entries.freeze
        freeze
      end

      # RAILS_MAX_THREADS, RAILS_MIN_THREADS and WEB_CONCURRENCY for a
      # trial of threads and processes (String values); those whose count
      # is nil are left out.
      def self.concurrency_variables(threads:, processes:)
        vars = {}
        THREADS_VARS.each { |name| vars[name] = threads.to_s } if threads
        vars[PROCESSES_VAR] = processes.to_s if processes
        vars
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
