# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Services
    # PostgreSQL from Debian's packages (the newest /usr/lib/postgresql/N/bin,
    # else initdb, postgres and psql on PATH): a cluster of its own made by
    # initdb in the service's directory (UTF-8, the C.UTF-8 locale, trust
    # for the connections of this machine's users who reach its socket,
    # which only the service's account and root can), listening on a unix
    # socket in that directory only (or on 127.0.0.1:port with `port:`).
    # The app gets the role and database "rackbench" (and, on the socket,
    # PGHOST: client_env):
    #
    #   DATABASE_URL=postgresql:///rackbench?host=/tmp/rackbench-services-.../rails-posts-pg-postgresql&user=rackbench
    #
    # The template is a database of its own, copied from the app's
    # (CREATE DATABASE rackbench_template TEMPLATE rackbench) once the
    # app's setup ran; restoring drops the app's database and copies it
    # back from the template (its files copied), then checkpoints, so that
    # no checkpoint of the restore's writes lands in the window. Its state is the row count
    # of every table (PostgresqlState).
    class Postgresql < Kind
      DATABASE = "rackbench"
      ROLE = "rackbench"
      TEMPLATE = "rackbench_template"
      SUPERUSER = "postgres"
      # The socket file's name follows the port (.s.PGSQL.5432) even when
      # nothing listens on TCP.
      SOCKET_PORT = 5432
      DATA = "data"
      DEBIAN_BINS = "/usr/lib/postgresql/*/bin"
      # How long one administrative statement may take (a restore copies
      # the whole database).
      STATEMENT_TIMEOUT_S = 600
      INITDB_TIMEOUT_S = 300
      PING_TIMEOUT_S = 5
      # rackbench's own: where it listens and keeps its data.
      RESERVED = %w[listen_addresses port unix_socket_directories unix_socket_permissions unix_socket_group
                    data_directory config_file hba_file ident_file].freeze
      SETTING = /\A[a-z_][a-z0-9_.]*\z/

      def name = "postgresql"
      def title = "PostgreSQL"
      def package = "postgresql"
      def account_name = "postgres"
      def default_env = "DATABASE_URL"

      def programs
        { init: "initdb", server: "postgres", client: "psql" }
      end

      # Debian's newest versioned bin directory when it has all three,
      # else the programs on PATH.
      def paths
        @paths ||= begin
          dir = Dir.glob(DEBIAN_BINS).select { |d| programs.values.all? { |p| File.executable?(File.join(d, p)) } }
                   .max_by { |d| d[%r{postgresql/(\d+)}, 1].to_i }
          dir ? programs.transform_values { |p| File.join(dir, p) } : super
        end
      end

      def example_setting = "shared_buffers or work_mem"

      # A problem with one `settings:` entry (a -c NAME=VALUE), or nil.
      def setting_problem(key, value)
        key_problem(key, SETTING, RESERVED) ||
          ([String, Integer, Float, true, false].any? { |t| t === value } ? nil : "must be a string, number or true/false") # rubocop:disable Style/CaseEquality
      end

      def setting_value(value)
        { true => "on", false => "off" }.fetch(value, value.to_s)
      end

      def version_flag = "--version"
      def version_pattern = /PostgreSQL\)\s+(\S+)/

      # Creates the cluster (initdb) in dir as account; raises SetupError
      # with initdb's own error line.
      def prepare(dir:, account:, log:, timeout_s: INITDB_TIMEOUT_S)
        argv = (account&.prefix || []) + [paths.fetch(:init), "-D", File.join(dir, DATA), "-U", SUPERUSER,
                                          "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]
        result = Command.run(argv, env: { "PATH" => ENV.fetch("PATH", "/usr/bin:/bin") }, timeout_s: timeout_s,
                                   chdir: dir, log: log)
        raise SetupError, "initdb failed: #{result.error_line} (log: #{log})" unless result.success?
      end

      def endpoint(dir:, port:)
        Endpoint.new(socket: dir, port: port || SOCKET_PORT, tcp: !port.nil?)
      end

      def argv(dir:, endpoint:, settings:)
        listen = endpoint.tcp? ? Ports::LOCALHOST : ""
        [paths.fetch(:server), "-D", File.join(dir, DATA), "-p", endpoint.port.to_s,
         "-c", "listen_addresses=#{listen}", "-c", "unix_socket_directories=#{endpoint.socket}",
         "-c", "unix_socket_permissions=0700",
         *settings.flat_map { |key, value| ["-c", "#{key}=#{value}"] }]
      end

      def ready?(endpoint)
        psql(endpoint, "SELECT 1", timeout_s: PING_TIMEOUT_S, raise_error: false)&.strip == "1"
      end

      # The app's role and its (empty) database.
      def after_ready(endpoint)
        psql(endpoint, "CREATE ROLE #{ROLE} LOGIN CREATEDB", "CREATE DATABASE #{DATABASE} OWNER #{ROLE}")
      end

      def url(endpoint)
        return "postgresql://#{ROLE}@#{Ports::LOCALHOST}:#{endpoint.port}/#{DATABASE}" if endpoint.tcp?

        # No authority at all: Ruby's URI (Rails parses DATABASE_URL with
        # it) refuses a user without a host; libpq takes both from the query.
        "postgresql:///#{DATABASE}?host=#{endpoint.socket}&user=#{ROLE}"
      end

      # On the socket, PGHOST names its directory too: libpq reads it when
      # a client leaves the URL's host out, as Rails 6.1 does (it drops the
      # query's host when the URL has none of its own).
      def client_env(endpoint)
        endpoint.tcp? ? {} : { "PGHOST" => endpoint.socket }
      end

      # Copies the app's database into the template (its connections, the
      # setup's, are ended first: a template must have none).
      def keep_template(endpoint)
        psql(endpoint, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '#{DATABASE}' " \
                       "AND pid <> pg_backend_pid()",
             "DROP DATABASE IF EXISTS #{TEMPLATE}", "CREATE DATABASE #{TEMPLATE} TEMPLATE #{DATABASE}")
        state(endpoint)
      end

      def restore(endpoint)
        psql(endpoint, "DROP DATABASE IF EXISTS #{DATABASE} WITH (FORCE)",
             "CREATE DATABASE #{DATABASE} TEMPLATE #{TEMPLATE} OWNER #{ROLE}#{file_copy}", "CHECKPOINT")
        state(endpoint)
      end

      # The app database's row count per table.
      def state(endpoint)
        PostgresqlState.parse(psql(endpoint, PostgresqlState::QUERY, database: DATABASE))
      end

      private

      # PostgreSQL 15 copies a template through its write-ahead log unless
      # told otherwise, which writes the whole database into the log;
      # copying the files (the only way before 15) costs two checkpoints and
      # no log, and was as fast or faster on a small database here (1.3-1.7 s
      # with the drop and the checkpoint after, against 1.5-1.9 s).
      def file_copy
        version.to_s.split(".").first.to_i >= 15 ? " STRATEGY FILE_COPY" : ""
      end

      # Runs each statement in order (each in a transaction of its own:
      # CREATE DATABASE cannot run in one) as the superuser, over the
      # socket; returns psql's output (unaligned, tuples only). Raises
      # SetupError with PostgreSQL's error line, unless raise_error is
      # false (then nil).
      def psql(endpoint, *statements, database: SUPERUSER, timeout_s: STATEMENT_TIMEOUT_S, raise_error: true)
        argv = [paths.fetch(:client), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", endpoint.socket,
                "-p", endpoint.port.to_s, "-U", SUPERUSER, "-d", database,
                *statements.flat_map { |statement| ["-c", statement] }]
        result = Command.run(argv, env: { "PATH" => ENV.fetch("PATH", "/usr/bin:/bin"), "PGCONNECT_TIMEOUT" => "5" },
                                   timeout_s: timeout_s)
        return result.stdout if result.success?
        return nil unless raise_error

        raise SetupError, "psql: #{result.error_line}"
      end
    end

    register("postgresql", position: 1) { Postgresql.new }
  end
end
