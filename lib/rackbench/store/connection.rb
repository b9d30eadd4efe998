# frozen_string_literal: true

require "fileutils"
require "sequel"
require "uri"

module Rackbench
  class Store
    # Turns Store.open's target (a results directory or a database URL:
    # sqlite://PATH, postgres://USER@HOST:PORT/DATABASE) into a connected
    # Sequel::Database with rackbench's settings, or a Store::Error with one
    # line naming the file or the server (a bad URL, a server that is down,
    # a password refused).
    module Connection
      DB_FILE = "results.db"
      # Milliseconds a writer waits for another process's lock (a report
      # reading while a run writes) before failing.
      BUSY_TIMEOUT_MS = 10_000
      URL_PATTERN = %r{\A[a-z][a-z0-9+.\-]*://}i
      # The schemes of the databases rackbench stores to: a SQLite file, or
      # a PostgreSQL server (shared by the hosts of a fleet).
      SCHEMES = { "sqlite" => :sqlite, "postgres" => :postgres, "postgresql" => :postgres }.freeze
      # Seconds a connection to a PostgreSQL server may take before the
      # store says it is down, rather than waiting for the kernel's minutes.
      CONNECT_TIMEOUT_S = 10

      module_function

      # Returns [db, location]: the Sequel::Database and the text naming it in
      # messages (the file path, or the URL without its password).
      #
      # :template :: a results directory without a database gets a copy of
      #              the migrated template when it is on (Store::Template)
      #              (default: false: the file is created empty)
      def connect(target, template: false)
        target = target.to_s
        if target.match?(URL_PATTERN)
          location = redact(target)
          check_url!(target, location)
          [establish(target, location), location]
        else
          # A Hash, not a URL: a path may hold characters a URL would mangle.
          path = File.join(prepare_directory(target), DB_FILE)
          Template.copy_to(path) if template
          [establish({ adapter: "sqlite", database: path }, path), path]
        end
      end

      # Whether +target+ (a Store.open target) names a database server by
      # URL rather than a results directory or a SQLite file.
      def server?(target)
        scheme(target.to_s) == :postgres
      end

      # :sqlite or :postgres for a URL of a scheme rackbench stores to,
      # :directory for a results directory, nil for another URL.
      def scheme(target)
        return :directory unless target.match?(URL_PATTERN)

        SCHEMES[target[/\A[^:]+/].downcase]
      end

      # Raises Store::Error, one line, for a URL rackbench cannot store to:
      # another scheme, no host or database name, a port that is no number.
      def check_url!(url, location)
        kind = scheme(url)
        unless kind
          raise Store::Error, "cannot open #{location}: unsupported store URL scheme " \
                              "'#{url[/\A[^:]+/]}' (a results directory, sqlite://PATH or postgres://HOST/DATABASE)"
        end
        return unless kind == :postgres

        uri = begin
          URI.parse(url)
        rescue URI::InvalidURIError
          raise Store::Error, "cannot open #{location}: not a valid URL (postgres://USER@HOST:PORT/DATABASE)"
        end
        if uri.host.to_s.empty? || uri.path.to_s.delete_prefix("/").empty?
          raise Store::Error, "cannot open #{location}: a PostgreSQL URL names a host and a database " \
                              "(postgres://USER@HOST:PORT/DATABASE)"
        end
      end

      # Creates +dir+ if needed and checks rackbench can write there; returns
      # its absolute path.
      def prepare_directory(dir)
        raise Store::Error, "results directory must not be empty" if dir.strip.empty?

        dir = File.expand_path(dir)
        blocker = blocking_file(dir)
        raise Store::Error, "cannot create results directory #{dir}: #{blocker} is not a directory" if blocker

        begin
          FileUtils.mkdir_p(dir)
        rescue SystemCallError => e
          raise Store::Error, "cannot create results directory #{dir}: #{e.message.sub(/ @ .*/, "")}"
        end
        # SQLite also writes results.db-wal and -shm beside the file.
        raise Store::Error, "results directory #{dir} is not writable" unless File.writable?(dir)

        db_file = File.join(dir, DB_FILE)
        if File.exist?(db_file) && !(File.file?(db_file) && File.writable?(db_file))
          raise Store::Error, "#{db_file} is not a writable file"
        end
        dir
      end

      # The nearest existing path at or above +dir+ when it is not a
      # directory (mkdir_p would only say "File exists"), else nil.
      def blocking_file(dir)
        path = dir
        path = File.dirname(path) until File.exist?(path) || File.dirname(path) == path
        File.exist?(path) && !File.directory?(path) ? path : nil
      end

      # Connects to +spec+ (a URL or a Sequel options Hash).
      def establish(spec, location)
        sqlite = spec.is_a?(Hash) || spec.start_with?("sqlite:")
        options = { keep_reference: false }
        unless sqlite
          options[:connect_timeout] = CONNECT_TIMEOUT_S
          # Every session in UTC, as Sequel's times are (db.timezone below):
          # the fleet's heartbeats compare CURRENT_TIMESTAMP across hosts
          # whatever their PGTZ says.
          options[:after_connect] = ->(conn) { conn.exec("SET TIME ZONE 'UTC'") }
        end
        # synchronous=FULL: a commit is on disk when save_trial returns, so a
        # trial survives kill -9 of the runner (and power loss) right after it.
        options.update(synchronous: :full, foreign_keys: true, timeout: BUSY_TIMEOUT_MS) if sqlite
        db = spec.is_a?(Hash) ? Sequel.connect(spec.merge(options)) : Sequel.connect(spec, options)
        # Store timestamps in UTC so results read the same from any time zone.
        db.timezone = :utc
        # WAL: a report can read while a run writes, and a commit is one
        # append. The mode is persistent in the file; asking again is cheap.
        db.fetch("PRAGMA journal_mode = WAL").all if sqlite
        db
      rescue Sequel::AdapterNotFound, LoadError => e
        raise Store::Error, "cannot open #{location}: #{e.message.lines.first.strip}"
      rescue Sequel::DatabaseError => e
        db&.disconnect
        raise Store::Error, "cannot open #{location}: #{Connection.reason(e)}"
      end

      # The URL with any password replaced by "***", fit for a message.
      def redact(url)
        # [^/]* is greedy: a password holding "@" is hidden up to the last one.
        url.sub(%r{\A([^:/]+://[^:/@]*:)[^/]*@}, '\1***@')
      end

      # The driver's own words for a Sequel::DatabaseError, one line, without
      # the SQL that Sequel appends ("database or disk is full",
      # "file is not a database").
      def reason(error)
        text = (error.cause || error).message.lines.first.to_s.strip
        text = text.sub(/\A[\w:]+(Exception|Error|Bad): /, "")
        # PostgreSQL's severity prefix ("FATAL:  database "x" does not exist"),
        # after libpq's "connection to server at ... failed: " when the
        # server answered (it is up: what it said is the reason).
        text = text.sub(/\Aconnection to server .* failed: (?=(FATAL|ERROR):)/, "")
        text = text.sub(/\A(FATAL|ERROR):\s+/, "")
        text.sub(/:\z/, "")
      end
    end
  end
end
