# frozen_string_literal: true

require "fileutils"
require "tmpdir"

module Rackbench
  module Services
    # The directory a run's services live in, one subdirectory per service:
    # under the system's tmp rather than the results directory, because a
    # service runs under its own account (Account), which must reach its
    # directory (a results directory under /root would not let it), and a
    # unix socket's path must stay short (about 100 bytes). Mode 0711: the
    # services' accounts pass through, nobody lists it.
    #
    # It holds a copy of rackbench-guard (the services' accounts may not
    # reach the gem's own copy) and a lock file the run holds for its life:
    # a later run removes the directories whose lock nobody holds any more,
    # those of a runner that was killed (kill -9) before it could.
    class Workspace
      PREFIX = "rackbench-services-"
      LOCK = "run.lock"
      GUARD = "rackbench-guard"
      # A unix socket path is at most 107 bytes on Linux; PostgreSQL's file
      # adds "/.s.PGSQL.5432".
      MAX_SOCKET_DIR_BYTES = 90
      # A service directory's own name at most (the rest is the tmp
      # directory's path and the workspace's, about 45 bytes under /tmp).
      NAME_BYTES = 32

      attr_reader :dir

      # Creates the directory (after removing what dead runs left) and
      # returns the Workspace. Raises SetupError when the tmp directory's
      # path is too long for a socket.
      #
      # :tmpdir :: where (default: Dir.tmpdir)
      # :guard :: the rackbench-guard to copy (default: the gem's)
      def self.create(tmpdir: Dir.tmpdir, guard: Trial::Kind::GUARD)
        sweep(tmpdir)
        new(Dir.mktmpdir(PREFIX, tmpdir), guard)
      end

      # Removes the workspaces under tmpdir whose run is gone (nobody holds
      # their lock). Returns how many.
      def self.sweep(tmpdir = Dir.tmpdir)
        Dir.glob(File.join(tmpdir, "#{PREFIX}*")).count do |dir|
          lock = File.join(dir, LOCK)
          next false unless File.file?(lock)

          File.open(lock) do |file|
            next false unless file.flock(File::LOCK_EX | File::LOCK_NB)

            FileUtils.rm_rf(dir)
            true
          end
        rescue SystemCallError
          false
        end
      end

      def initialize(dir, guard)
        @dir = dir
        File.chmod(0o711, dir)
        @lock = File.open(File.join(dir, LOCK), File::RDWR | File::CREAT, 0o600)
        @lock.flock(File::LOCK_EX)
        FileUtils.cp(guard, guard_path)
        File.chmod(0o755, guard_path)
      rescue StandardError
        remove
        raise
      end

      # The copy of rackbench-guard the services start behind.
      def guard_path
        File.join(@dir, GUARD)
      end

      # A new directory for one service (name, e.g. "rails-posts-pg-postgresql",
      # numbered in the order asked, and cut to NAME_BYTES: an app's label
      # may be long), given to account (nil: this user). Raises SetupError
      # when its path is too long for a socket.
      def service_dir(name, account)
        @count = (@count || 0) + 1
        path = File.join(@dir, "#{@count}-#{name.gsub(/[^A-Za-z0-9._-]/, "_")}"[0, NAME_BYTES])
        if path.bytesize > MAX_SOCKET_DIR_BYTES
          raise SetupError, "the services' directory #{path} is too long for a unix socket (over " \
                            "#{MAX_SOCKET_DIR_BYTES} bytes): set TMPDIR to a shorter directory"
        end
        FileUtils.mkdir_p(path)
        File.chmod(0o700, path)
        account&.own(path)
        path
      end

      # Removes the directory and lets go of the lock.
      def remove
        FileUtils.rm_rf(@dir)
        @lock&.close
        @lock = nil
      end
    end
  end
end
