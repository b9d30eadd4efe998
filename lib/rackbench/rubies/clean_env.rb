# frozen_string_literal: true

module Rackbench
  module Rubies
    # The environment a child ruby gets. rackbench may itself run under
    # `bundle exec` (RUBYOPT=-rbundler/setup, BUNDLE_GEMFILE pointing at
    # rackbench's own Gemfile, RUBYLIB with this Ruby's Bundler) or inside
    # a version manager's shell (GEM_HOME, GEM_PATH for another ruby). A
    # benchmarked ruby inheriting those would load rackbench's bundle, or
    # another ruby's gems, or fail outright (JRuby given CRuby's Bundler).
    module CleanEnv
      # Variables removed from every child ruby's environment.
      LEAKS = %w[RUBYOPT RUBYLIB GEM_HOME GEM_PATH GEM_ROOT].freeze
      # Bundler settings that say which bundle and where: each environment
      # sets its own. Other BUNDLE_* settings (mirrors, credentials, jobs)
      # are the user's and pass through.
      BUNDLE_LOCATION = %w[BUNDLE_GEMFILE BUNDLE_LOCKFILE BUNDLE_BIN_PATH BUNDLE_PATH BUNDLE_PATH__SYSTEM
                           BUNDLE_APP_CONFIG BUNDLE_BIN BUNDLE_DEPLOYMENT BUNDLE_FROZEN BUNDLE_WITHOUT
                           BUNDLE_WITH BUNDLE_ONLY].freeze
      # Bundler's marker for "this variable was unset before bundle exec".
      UNSET_MARKER = "BUNDLER_ENVIRONMENT_PRESERVER_INTENTIONALLY_NIL"

      # Overrides for Process.spawn that undo the leaks of parent: a nil
      # value removes the variable. BUNDLER_* variables (Bundler's own
      # bookkeeping under bundle exec) are removed too, and PATH is
      # restored to what it was before bundle exec changed it.
      def self.overrides(parent)
        changes = {}
        parent.each_key do |key|
          changes[key] = nil if LEAKS.include?(key) || BUNDLE_LOCATION.include?(key) || key.start_with?("BUNDLER_")
        end
        original_path = parent["BUNDLER_ORIG_PATH"]
        changes["PATH"] = original_path if original_path && original_path != UNSET_MARKER
        changes
      end

      # The whole environment of parent minus its leaks, as a Hash of
      # strings (for spawning with unsetenv_others).
      def self.clean(parent)
        parent.to_h.merge(overrides(parent)).compact
      end
    end
  end
end
