# frozen_string_literal: true

require "fileutils"
require "securerandom"

module Rackbench
  class Store
    # An empty results database at this rackbench's schema, migrated once
    # per process, that each new SQLite results database of the process
    # starts as a copy of instead of running every migration again.
    #
    # Why: a new database runs Schema::MIGRATIONS from the first, and on
    # SQLite a migration that renames or drops a column rebuilds its table
    # (Sequel copies it into a new one): about 25 ms of CPU for a new
    # database, against about 1 ms to copy a file. A `rackbench run`
    # creates one database and would pay for the template besides, so the
    # template is off unless a process that creates many turns it on (the
    # tests, which create hundreds: test/test_helper.rb). The template is
    # made by the same migrations, so a copy holds the same schema, the
    # same version row and the same journal mode (WAL is kept in the
    # file's header) as a database migrated in place
    # (test/unit/store_template_test.rb compares them).
    module Template
      FILE = "template.db"

      @dir = nil
      @path = nil
      @lock = Mutex.new

      class << self
        # Turns the template on for this process: it is made in +dir+ (a
        # directory of the caller's, which the caller removes) when the
        # first new database needs it.
        def enable(dir)
          @lock.synchronize do
            @dir = dir
            @path = nil
          end
        end

        # Turns it off: new databases run the migrations again.
        def disable
          enable(nil)
        end

        def enabled?
          !@dir.nil?
        end

        # Puts a copy of the template at +path+ (a new results database's
        # file, in a directory Connection.prepare_directory checked) when
        # the template is on and no file is there. The copy is made beside
        # +path+ and linked to it, so that a database another store
        # created there meanwhile is never replaced: theirs is kept. Any
        # failure to copy leaves the ordinary way: the store migrates the
        # new file itself. Returns whether +path+ is a copy.
        def copy_to(path)
          template = prepared
          return false if template.nil? || File.exist?(path)

          partial = "#{path}.template-#{SecureRandom.hex(6)}"
          begin
            FileUtils.cp(template, partial)
            File.link(partial, path)
            true
          rescue SystemCallError
            false
          ensure
            FileUtils.rm_f(partial)
          end
        end

        private

        # The template's path, made on the first call; nil when off.
        def prepared
          @lock.synchronize do
            return nil if @dir.nil?

            @path ||= build(File.join(@dir, FILE))
          end
        end

        # Migrates a new database at +path+ and closes it with its
        # write-ahead log folded back into the file: the file alone is the
        # whole database, ready to copy.
        def build(path)
          FileUtils.rm_f([path, "#{path}-wal", "#{path}-shm"])
          db = Connection.establish({ adapter: "sqlite", database: path }, path)
          begin
            Schema.migrate!(db, path)
            db.fetch("PRAGMA wal_checkpoint(TRUNCATE)").all
          ensure
            db.disconnect
          end
          path
        end
      end
    end
  end
end
