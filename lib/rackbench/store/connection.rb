# frozen_string_literal: true

require "fileutils"
require "sequel"

module Rackbench
  class Store
    # Turns Store.open's target (a results directory or a database URL) into a
    # connected Sequel::Database with rackbench's settings, or a Store::Error
    # with one line naming the file.
    module Connection
      DB_FILE = "results.db"
      # Milliseconds a writer waits for another process's lock (a report
      # reading while a run writes) before failing.
      BUSY_TIMEOUT_MS = 10_000
      URL_PATTERN = %r{\A[a-z][a-z0-9+.\-]*://}i

      module_function

      # Returns [db, location]: the Sequel::Database and the text naming it in
      # messages (the file path, or the URL without its password).
      def connect(target)
        target = target.to_s
        if target.match?(URL_PATTERN)
          location = redact(target)
          [establish(target, location), location]
        else
          # A Hash, not a URL: a path may hold characters a URL would mangle.
          path = File.join(prepare_directory(target), DB_FILE)
          [establish({ adapter: "sqlite", database: path }, path), path]
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
        text = text.sub(/\A[\w:]+(Exception|Error): /, "")
        text.sub(/:\z/, "")
      end
    end
  end
end
