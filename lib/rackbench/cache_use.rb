# frozen_string_literal: true

require "fileutils"
require "json"

module Rackbench
  # Which of the cache's items (a ruby built from source, a Bundler
  # environment) a process is using, so that `rackbench cache prune` never
  # removes one under a running experiment, and which results directories
  # ever used each, so that it can tell the items no stored experiment
  # uses. A process that uses an item holds a shared flock on the item's
  # lock file until it exits (the kernel drops it then, also after kill -9);
  # prune removes an item only when it can take that lock exclusively.
  # Each use also records the results directory in the item's users file
  # and touches the lock file, whose modification time is the item's last
  # use.
  module CacheUse
    @held = {}
    @mutex = Mutex.new

    # Holds a shared lock on lock_path (created if missing) for the rest of
    # this process, waiting while someone holds it exclusively (a build or
    # a prune); records user (a results directory) in users_path. An open
    # File already locked exclusively by this process (a build that just
    # finished) is passed as file and turned into the shared lock.
    def self.hold(lock_path, users_path:, user: nil, file: nil)
      @mutex.synchronize do
        if @held.key?(lock_path)
          file&.close
        else
          @held[lock_path] = file ? share(file) : open_shared(lock_path)
        end
      end
      touch(lock_path)
      record_user(users_path, user) if user
    end

    def self.share(file)
      file.flock(File::LOCK_SH)
      file
    end

    # The lock file opened and locked shared. A prune may remove the file
    # while this process waits for the lock: then the lock is on a file
    # nobody else can see, and it is taken again on the new one.
    def self.open_shared(lock_path)
      loop do
        FileUtils.mkdir_p(File.dirname(lock_path))
        file = share(File.open(lock_path, File::RDWR | File::CREAT, 0o644))
        return file if (File.stat(lock_path).ino rescue nil) == file.stat.ino

        file.close
      end
    end

    # True when some process holds lock_path (shared or exclusive): what
    # prune must leave alone. Answers without waiting.
    def self.in_use?(lock_path)
      return false unless File.exist?(lock_path)

      File.open(lock_path, File::RDWR) do |file|
        got = file.flock(File::LOCK_EX | File::LOCK_NB)
        file.flock(File::LOCK_UN) if got
        !got
      end
    rescue SystemCallError
      false
    end

    # Runs the block holding lock_path exclusively, or returns :in_use at
    # once when someone holds it (prune's removal of one item).
    def self.exclusively(lock_path)
      File.open(lock_path, File::RDWR | File::CREAT, 0o644) do |file|
        return :in_use unless file.flock(File::LOCK_EX | File::LOCK_NB)

        yield
      end
    end

    # The results directories recorded in users_path.
    def self.users(users_path)
      File.file?(users_path) ? File.readlines(users_path, chomp: true).reject(&:empty?).uniq : []
    rescue SystemCallError
      []
    end

    # Lets go of lock_path, held by this process.
    def self.release(lock_path)
      @mutex.synchronize { @held.delete(lock_path)&.close }
    end

    # Lets go of every lock this process holds (tests; a process that ends
    # lets go by itself).
    def self.release_all
      @mutex.synchronize do
        @held.each_value(&:close)
        @held.clear
      end
    end

    def self.touch(path)
      now = Time.now
      File.utime(now, now, path)
    rescue SystemCallError
      nil
    end

    def self.record_user(users_path, user)
      user = File.expand_path(user)
      return if users(users_path).include?(user)

      FileUtils.mkdir_p(File.dirname(users_path))
      File.write(users_path, "#{user}\n", mode: "a")
    rescue SystemCallError
      nil # the record helps prune; a read-only cache must not fail a run
    end

    private_class_method :touch, :record_user, :share, :open_shared
  end
end
