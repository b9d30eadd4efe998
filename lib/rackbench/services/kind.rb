# frozen_string_literal: true

require "open3"

module Rackbench
  module Services
    # What the kinds of service share: finding their programs, their
    # version, and the one-line reason when they are not installed.
    # A kind (Postgresql, Redis, Memcached) says, besides:
    #
    # name, title, package, account_name, default_env :: who it is
    # programs :: the programs it needs, by role
    # setting_problem(key, value), setting_value(value) :: its `settings:`
    # prepare(dir:, account:, log:, timeout_s:) :: what it needs before its first start (initdb)
    # endpoint(dir:, port:) :: where it will answer
    # argv(dir:, endpoint:, settings:) :: the command that runs it in the foreground
    # ready?(endpoint) :: whether it answers yet
    # after_ready(endpoint) :: what it needs once it answers (the app's role and database)
    # url(endpoint) :: what the app gets in its variable
    # client_env(endpoint) :: more variables its clients read ({} unless the kind says)
    # keep_template(endpoint) :: keeps its state as the template; returns the state
    # restore(endpoint) :: puts the template back; returns the state
    class Kind
      # The programs' paths by role, or nil when one is missing.
      def paths
        @paths ||= begin
          found = programs.transform_values { |program| Proxy::Binary.find(program) }
          found.values.all? ? found : nil
        end
      end

      # Why it cannot run here (a program is not installed), or nil.
      def missing_reason
        return nil if paths

        missing = programs.values.reject { |program| Proxy::Binary.find(program) }
        "service #{name} needs #{missing.join(", ")} (#{title}), which #{missing.size == 1 ? "is" : "are"} not " \
          "installed (Debian: apt-get install #{package}; bin/setup --all installs it)"
      end

      # The program's own version ("15.18", "7.0.15", "1.6.18"), or nil.
      def version
        return @version if defined?(@version)

        out, _status = Open3.capture2e(paths.fetch(:server), version_flag)
        @version = out[version_pattern, 1]
      rescue SystemCallError, KeyError, NoMethodError
        @version = nil
      end

      # More variables for the app's clients of the service: none.
      def client_env(_endpoint)
        {}
      end

      # The names client_env sets for a service on TCP (tcp: true) or not.
      def client_env_names(tcp:)
        client_env(Endpoint.new(socket: "/", port: 1, tcp: tcp)).keys
      end

      # The program the document names (postgres, redis-server, memcached).
      def program
        programs.fetch(:server)
      end

      private

      # A settings key problem for a key that is not a string of the given
      # pattern, or that rackbench sets itself; nil when fine.
      def key_problem(key, pattern, reserved)
        return "setting names are strings like #{example_setting}" unless key.is_a?(String) && pattern.match?(key)
        return "set by rackbench (where the #{title} listens and keeps its data); not a setting" if reserved.include?(key)

        nil
      end
    end
  end
end
