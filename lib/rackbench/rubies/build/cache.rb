# frozen_string_literal: true

require "fileutils"
require "json"
require_relative "../../cache_root"
require_relative "../../cache_use"
require_relative "../../holder_lock"

module Rackbench
  module Rubies
    module Build
      # The rubies built from source, one directory per recipe key, under
      # the cache root's rubies/:
      #
      #   rubies/9c1e0f4b2a7d3e55/prefix/          the install (bin/ruby, lib/libruby.so.3.4, ...)
      #   rubies/9c1e0f4b2a7d3e55/recipe.json      the recipe and the build's record, written last:
      #                                            a directory without it is a build that did not finish
      #   rubies/9c1e0f4b2a7d3e55/users            results directories that ran it (CacheUse)
      #   rubies/9c1e0f4b2a7d3e55.lock             exclusive while building (its holder named), shared while used
      #   rubies/logs/9c1e0f4b2a7d3e55/            each step's log, kept after the build
      #   rubies/work/9c1e0f4b2a7d3e55-<pid>/      the source and staging while building, removed after
      #   rubies/timings.json                      the last build's step durations (Progress's estimates)
      #   rubies/ccache/                           ccache's objects (Builder::CCACHE_WRAPPERS), when installed
      #   rubies/gems/                             the bundled gems fetched for a source without them
      #                                            (BundledGems), copied into every later build's source
      class Cache
        RECORD = "recipe.json"
        # The copy of the recipe inside the install, where the identity
        # agent of a running server finds it from its own executable.
        INSTALL_RECORD = "rackbench-recipe.json"

        attr_reader :root

        def self.default_root(env = ENV)
          File.join(CacheRoot.path(env), "rubies")
        end

        def initialize(root = self.class.default_root)
          @root = File.expand_path(root)
        end

        def dir(key) = File.join(@root, key)
        def prefix(key) = File.join(dir(key), "prefix")
        def ruby_path(key) = File.join(prefix(key), "bin", "ruby")
        def lock_path(key) = File.join(@root, "#{key}.lock")
        def users_path(key) = File.join(dir(key), "users")
        def log_dir(key) = File.join(@root, "logs", key)
        def work_dir(key) = File.join(@root, "work", "#{key}-#{Process.pid}")
        def timings = Timings.new(File.join(@root, "timings.json"))
        def ccache_dir = File.join(@root, "ccache")
        def bundled_gems_dir = File.join(@root, "gems")

        def complete?(key)
          File.file?(File.join(dir(key), RECORD)) && File.executable?(ruby_path(key))
        end

        # The stored record of a finished build, or nil.
        def record(key)
          JSON.parse(File.read(File.join(dir(key), RECORD)))
        rescue SystemCallError, JSON::ParserError
          nil
        end

        # The keys of every finished build.
        def keys
          Dir.children(@root).select { |name| name.match?(/\A\h{16}\z/) && complete?(name) }.sort
        rescue SystemCallError
          []
        end

        # The build of recipe: when the cache has it, at once; otherwise
        # the block builds it (called with the key's directory, under the
        # key's exclusive lock: a second run needing the same build waits,
        # told by waiting(holder, waited_s) whom it waits for, and then
        # finds it built). Either way this process then holds the build
        # shared (CacheUse) so that prune leaves it alone, recording user
        # (a results directory). Returns :reused or :built.
        def fetch(recipe, user: nil, waiting: nil)
          key = recipe.key
          FileUtils.mkdir_p(@root)
          if complete?(key)
            CacheUse.hold(lock_path(key), users_path: users_path(key), user: user)
            return :reused if complete?(key)

            # A prune removed it between the check and the lock: build it
            # again, without this process's own shared lock in the way.
            CacheUse.release(lock_path(key))
          end
          build_locked(key, user, waiting) { yield dir(key) }
        end

        private

        def build_locked(key, user, waiting)
          lock = File.open(lock_path(key), File::RDWR | File::CREAT, 0o644)
          HolderLock.acquire(lock, waiting: waiting, log: log_dir(key))
          outcome = :reused
          unless complete?(key)
            FileUtils.rm_rf(dir(key)) # what a build that died half-way left
            yield
            outcome = :built
          end
          CacheUse.hold(lock_path(key), users_path: users_path(key), user: user, file: lock)
          lock = nil # held for the rest of the process now
          outcome
        ensure
          lock&.close
        end
      end
    end
  end
end
