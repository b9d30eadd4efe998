# frozen_string_literal: true

require "yaml"

module Rackbench
  module Trial
    class Http < Kind
      # Before a run: a user's Rails app whose config/database.yml fixes its
      # database pool below the threads a trial gives each process. Rails'
      # own default reads the pool from RAILS_MAX_THREADS, which rackbench
      # sets to the threads; a number written in the file does not follow,
      # and threads beyond it wait for a connection (and time out under
      # load). The file is the user's: it is named, never rewritten. The
      # identity check then reports the pool each server really configured.
      module PoolCheck
        DATABASE_YML = File.join("config", "database.yml")
        # ERB tags, replaced by a placeholder before parsing: a pool computed
        # by ERB is not a fixed number.
        ERB_OUTPUT = /<%=.*?%>/m.freeze
        ERB_CODE = /<%.*?%>/m.freeze

        # One warning line per user app (Experiment::AppSpec) whose
        # database.yml sets, for the environment it runs in (RAILS_ENV of
        # its env, else production), a numeric pool below max_threads.
        def self.warnings(apps, max_threads)
          apps.reject(&:builtin).filter_map do |app|
            file = File.join(app.path, DATABASE_YML)
            rails_env = app.env.to_h.fetch("RAILS_ENV", "production")
            pool = fixed_pool(file, rails_env)
            next unless pool && pool < max_threads

            "warning: #{file}: pool: #{pool} for #{rails_env} is below the #{max_threads} threads per process of this " \
              "experiment: threads will wait for a database connection (write pool: <%= " \
              "ENV.fetch(\"RAILS_MAX_THREADS\") { 5 } %> to follow the threads)"
          end
        end

        # The smallest numeric pool the file's rails_env section sets (in a
        # multi-database section, of any database), or nil: no file, no such
        # section, a pool from ERB, or a file that does not parse.
        def self.fixed_pool(file, rails_env)
          return nil unless File.file?(file)

          text = File.read(file).gsub(ERB_OUTPUT, "erb").gsub(ERB_CODE, "")
          section = YAML.safe_load(text, aliases: true)&.dig(rails_env)
          return nil unless section.is_a?(Hash)

          configs = section.key?("adapter") || section.key?("pool") ? [section] : section.values.grep(Hash)
          configs.map { |config| config["pool"] }.grep(Integer).min
        rescue Psych::Exception, SystemCallError
          nil
        end
      end
    end
  end
end
