# frozen_string_literal: true

require "fileutils"
require "find"
require "json"
require "time"
require_relative "cache_root"
require_relative "cache_use"
require_relative "process/pid_alive"

module Rackbench
  # What the cache holds (`rackbench cache`): the rubies built from source,
  # the Bundler environments and the gem directories they install into,
  # the sources downloaded for builds, and what a build that stopped half
  # way left. Each Item says its size, when it was last used, the results
  # directories that used it and still exist, and whether a running
  # process holds it (CacheUse). Calibrations are not here: they are
  # stored with the results they calibrated (RESULTS/calibration/).
  class CacheInventory
    autoload :Prune, File.expand_path("cache_inventory/prune", __dir__)

    # kind :: "build", "environment", "gems", "agent", "source", "ccache", "bundled", "leftover"
    # name :: what it is, for a person ("ruby '3.4' 3.4.5 e11383d5631ff0a4", "rack-hello + puma on ruby-3.4.5")
    # paths :: what removing it removes (its directory first)
    # bytes :: disk used
    # last_used :: Time of its last use (or of its making)
    # users :: results directories that used it and still exist
    # in_use :: a running process holds it
    # lock_path :: the lock prune must take exclusively to remove it, or nil
    # gem_dir :: the gem directory an environment installs into, or nil
    Item = Struct.new(:kind, :name, :paths, :bytes, :last_used, :users, :in_use, :lock_path, :gem_dir,
                      keyword_init: true) do
      def to_h
        { "kind" => kind, "name" => name, "path" => paths.first, "bytes" => bytes,
          "last_used" => last_used&.utc&.iso8601, "users" => users, "in_use" => in_use }
      end
    end

    # A results directory "still exists" when it holds a results database.
    RESULTS_DB = "results.db"

    attr_reader :root

    def initialize(root: CacheRoot.path)
      @root = root
    end

    # Every item, builds first, then environments, gem directories,
    # sources and leftovers.
    def items
      builds + environments + gem_dirs + passenger_agents + sources + compiler_cache + bundled_gems + leftovers
    end

    private

    def builds
      cache = Rubies::Build::Cache.new(File.join(@root, "rubies"))
      cache.keys.map do |key|
        record = cache.record(key) || {}
        patches = Array(record["patches"]).map { |p| "+ #{p["name"]}" }
        from = [source_text(record["source"]), *patches].compact.join(" ")
        item("build", "ruby '#{record["name"]}' #{record["version"]} #{key}#{" (#{from})" unless from.empty?}",
             [cache.dir(key), cache.log_dir(key), cache.lock_path(key)], lock: cache.lock_path(key),
                                                                         users: cache.users_path(key))
      end
    end

    # "ruby-3.4.5.tar.xz", or "ruby at 1a2b3c4d5e" for a git commit (a
    # bisection's builds are one per commit of one repository).
    def source_text(source)
      return nil unless source.is_a?(Hash) && source["path"]

      name = File.basename(source["path"])
      source["kind"] == "git" && source["commit"] ? "#{name} at #{source["commit"][0, Labels::SHORT_COMMIT]}" : name
    end

    def environments
      Dir.glob(File.join(@root, "bundles", "*", "rackbench-env.json")).sort.filter_map do |mark|
        data = JSON.parse(File.read(mark))
        dir = File.dirname(mark)
        servers = Array(data["gemfile_extra"]).filter_map { |line| line[/\Agem "([^"]+)"/, 1] }
        ruby = data["ruby"] || File.basename(data["install_path"].to_s)
        item("environment", "#{File.basename(data["app_dir"].to_s)} + #{servers.join(", ")} on #{ruby} (#{data["app_dir"]})",
             [dir], lock: File.join(dir, "in-use.lock"), users: File.join(dir, "users")).tap do |env|
          env.gem_dir = data["install_path"]
        end
      rescue JSON::ParserError, SystemCallError
        nil
      end
    end

    # A gem directory is in use while any environment installing into it
    # is (or while gems are being installed into it: its install lock).
    def gem_dirs
      envs = environments
      Dir.glob(File.join(@root, "bundles", "gems", "*")).select { |d| File.directory?(d) }.sort.map do |dir|
        mine = envs.select { |env| env.gem_dir == dir }
        item("gems", "gems of #{File.basename(dir)} (#{mine.size} environment#{"s" unless mine.size == 1})",
             [dir, "#{dir}.lock"], lock: "#{dir}.lock", users: nil).tap do |gems|
          gems.in_use ||= mine.any?(&:in_use)
          gems.users = mine.flat_map(&:users).uniq
          gems.last_used = [gems.last_used, *mine.map(&:last_used)].compact.max
        end
      end
    end

    # Passenger's agents, one per passenger version and compiler
    # (Servers::PassengerAgents): each ruby's gems hold a copy, so pruning
    # one costs the next new ruby a compile; --unused keeps them (prune
    # them with --older-than).
    def passenger_agents
      require_relative "servers/passenger/agents"
      Servers::PassengerAgents.new(root: File.join(@root, "passenger-agents")).kept.map do |dir, build|
        what = if build
                 "Passenger #{build.version}'s agent, compiled in #{BundleEnv::Progress.duration(build.duration_s)} " \
                   "(#{build.compiler})"
               else
                 "Passenger #{File.basename(dir).sub(/-\h+\z/, "")}'s agent"
               end
        item("agent", what, [dir], lock: nil, users: nil)
      end
    end

    def sources
      Dir.glob(File.join(@root, "sources", "*")).sort.map do |path|
        item("source", "#{File.basename(path)} (downloaded for builds)", [path], lock: nil, users: nil)
      end
    end

    # ccache's objects from builds (Rubies::Build::Builder::CCACHE_WRAPPERS):
    # pruned by age only (--unused keeps it: no experiment uses it directly).
    def compiler_cache
      dir = File.join(@root, "rubies", "ccache")
      return [] unless File.directory?(dir)

      [item("ccache", "ccache's objects from ruby builds (rebuilds with other patches reuse them)", [dir], lock: nil,
                                                                                                      users: nil)]
    end

    # The bundled gems fetched for sources that lack them
    # (Rubies::Build::BundledGems), copied into every later build: pruned
    # by age only, as ccache's objects are.
    def bundled_gems
      dir = File.join(@root, "rubies", "gems")
      return [] unless File.directory?(dir)

      [item("bundled", "bundled gems fetched for ruby builds (#{Dir.glob(File.join(dir, "*.gem")).size} .gem files)", [dir],
            lock: nil, users: nil)]
    end

    # A build's work directory whose process is gone, and a build directory
    # without its record (a build killed half way) that nobody holds.
    def leftovers
      work = Dir.glob(File.join(@root, "rubies", "work", "*")).reject { |dir| PidAlive.call(dir[/-(\d+)\z/, 1]) }
      unfinished = Dir.glob(File.join(@root, "rubies", "*")).select do |dir|
        File.basename(dir).match?(/\A\h{16}\z/) && !File.file?(File.join(dir, Rubies::Build::Cache::RECORD))
      end
      # The lock of a build that failed (its logs stay under logs/).
      locks = Dir.glob(File.join(@root, "rubies", "*.lock")).select do |lock|
        File.basename(lock, ".lock").match?(/\A\h{16}\z/) && !File.exist?(lock.delete_suffix(".lock"))
      end
      (work + unfinished).sort.map do |dir|
        lock = File.basename(dir).match?(/\A\h{16}\z/) ? "#{dir}.lock" : nil
        item("leftover", "what a build that stopped left: #{dir}", [dir], lock: lock, users: nil)
      end + locks.sort.map do |lock|
        item("leftover", "the lock of a build that failed: #{lock}", [lock], lock: lock, users: nil)
      end
    end

    def item(kind, name, paths, lock:, users:)
      recorded = users ? CacheUse.users(users) : []
      Item.new(kind: kind, name: name, paths: paths, bytes: bytes(paths.first), lock_path: lock,
               last_used: last_used(lock, paths.first), in_use: lock ? CacheUse.in_use?(lock) : false,
               users: recorded.select { |dir| File.file?(File.join(dir, RESULTS_DB)) })
    end

    def last_used(lock, path)
      [lock, path].compact.select { |p| File.exist?(p) }.map { |p| File.mtime(p) }.max
    end

    # Disk used (allocated blocks), as du counts it; hard links once.
    def bytes(path)
      return 0 unless File.exist?(path)

      seen = {}
      total = 0
      Find.find(path) do |file|
        stat = File.lstat(file)
        next if stat.nlink > 1 && seen[[stat.dev, stat.ino]]

        seen[[stat.dev, stat.ino]] = true if stat.nlink > 1
        total += stat.blocks * 512
      rescue SystemCallError
        next
      end
      total
    end
  end
end
