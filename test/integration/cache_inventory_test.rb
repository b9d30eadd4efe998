# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"

# What `rackbench cache` lists and what prune removes, on a cache laid out
# in a temporary directory as builds and environments lay it out. A
# process holding an item is a real child process with the shared lock a
# run takes (CacheUse), so "in use" is the kernel's answer.
describe Rackbench::CacheInventory do
  before do
    @root = Dir.mktmpdir("rackbench-cache")
    @results = Dir.mktmpdir("rackbench-results")
    File.write(File.join(@results, "results.db"), "")
    @holders = []
  end

  after do
    @holders.each do |pid|
      Process.kill(:KILL, pid)
      Process.wait(pid)
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end
    FileUtils.rm_rf([@root, @results])
  end

  def build(key, name:, users: [], days_ago: 0, source: { "path" => "/src/ruby-3.4.5.tar.xz" })
    dir = File.join(@root, "rubies", key)
    FileUtils.mkdir_p(File.join(dir, "prefix", "bin"))
    File.write(File.join(dir, "prefix", "bin", "ruby"), "#!/bin/sh\n")
    File.chmod(0o755, File.join(dir, "prefix", "bin", "ruby"))
    File.write(File.join(dir, "recipe.json"),
               JSON.generate("key" => key, "name" => name, "version" => "3.4.5", "source" => source, "patches" => []))
    File.write(File.join(dir, "users"), users.map { |u| "#{u}\n" }.join)
    lock = File.join(@root, "rubies", "#{key}.lock")
    File.write(lock, "")
    age(lock, days_ago)
    age(dir, days_ago)
    dir
  end

  def environment(name, gem_dir:, users: [], days_ago: 0)
    dir = File.join(@root, "bundles", name)
    FileUtils.mkdir_p(dir)
    File.write(File.join(dir, "rackbench-env.json"),
               JSON.generate("app_dir" => "/apps/#{name}", "install_path" => gem_dir, "gemfile_extra" => ['gem "puma"'],
                             "ruby" => "/usr/bin/ruby3.1"))
    File.write(File.join(dir, "users"), users.map { |u| "#{u}\n" }.join)
    File.write(File.join(dir, "in-use.lock"), "")
    age(File.join(dir, "in-use.lock"), days_ago)
    age(dir, days_ago)
    FileUtils.mkdir_p(gem_dir)
    dir
  end

  def age(path, days)
    time = Time.now - (days * 86_400)
    File.utime(time, time, path)
  end

  # A child process that holds lock_path shared, as a run does, until killed.
  def hold(lock_path)
    reader, writer = IO.pipe
    pid = fork do
      reader.close
      File.open(lock_path, File::RDWR).flock(File::LOCK_SH)
      writer.puts "held"
      sleep
    end
    writer.close
    reader.gets
    @holders << pid
  end

  def inventory = Rackbench::CacheInventory.new(root: @root)

  it "lists builds, environments and gem directories with their users, sizes and use" do
    gems = File.join(@root, "bundles", "gems", "ruby-3.4.0")
    build("aaaaaaaaaaaaaaaa", name: "3.4", users: [@results, "/gone/results"])
    environment("rack-hello-1", gem_dir: gems, users: [@results])
    hold(File.join(@root, "bundles", "rack-hello-1", "in-use.lock"))

    items = inventory.items

    assert_equal %w[build environment gems], items.map(&:kind)
    assert_equal "ruby '3.4' 3.4.5 aaaaaaaaaaaaaaaa (ruby-3.4.5.tar.xz)", items[0].name
    assert_equal [[@results], [@results], [@results]], items.map(&:users), "results directories that still exist only"
    assert_equal [false, true, true], items.map(&:in_use), "a gem directory is in use with its environment"
    assert items[0].bytes.positive?
  end

  it "names a build from a git repository by its commit (a bisection builds one per commit)" do
    build("cccccccccccccccc", name: "dev", users: [@results],
                              source: { "kind" => "git", "path" => "/src/ruby", "ref" => "1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e",
                                        "commit" => "1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e" })
    assert_equal ["ruby 'dev' 3.4.5 cccccccccccccccc (ruby at 1f2e3d4c5b)"], inventory.items.map(&:name)
  end

  it "prunes what no stored experiment uses, never what a running process holds" do
    gems_old = File.join(@root, "bundles", "gems", "ruby-3.3.0")
    gems_held = File.join(@root, "bundles", "gems", "ruby-3.4.0")
    unused_build = build("aaaaaaaaaaaaaaaa", name: "old", users: ["/gone/results"])
    held_build = build("bbbbbbbbbbbbbbbb", name: "held", users: [])
    used_build = build("cccccccccccccccc", name: "used", users: [@results])
    unused_env = environment("rack-hello-old", gem_dir: gems_old)
    held_env = environment("rack-hello-held", gem_dir: gems_held)
    hold(File.join(@root, "rubies", "bbbbbbbbbbbbbbbb.lock"))
    hold(File.join(held_env, "in-use.lock"))

    decisions = Rackbench::CacheInventory::Prune.new(inventory.items, unused: true).run!

    removed = decisions.select(&:remove).map { |d| d.item.paths.first }
    assert_equal [unused_build, unused_env, gems_old].sort, removed.sort
    [unused_build, unused_env, gems_old].each { |path| refute File.exist?(path), path }
    [held_build, used_build, held_env, gems_held].each { |path| assert File.exist?(path), path }
    kept = decisions.reject(&:remove).to_h { |d| [d.item.paths.first, d.reason] }
    assert_equal "in use by a running process", kept.fetch(held_build)
    assert_equal "used by #{@results}", kept.fetch(used_build)
  end

  it "prunes by age, with both conditions when both are given" do
    old = build("aaaaaaaaaaaaaaaa", name: "old", users: [@results], days_ago: 40)
    recent = build("bbbbbbbbbbbbbbbb", name: "recent", users: [], days_ago: 1)

    decisions = Rackbench::CacheInventory::Prune.new(inventory.items, older_than_s: 30 * 86_400).decisions
    assert_equal [true, false], decisions.map(&:remove)
    assert_equal "unused for 40 d", decisions.first.reason

    both = Rackbench::CacheInventory::Prune.new(inventory.items, older_than_s: 30 * 86_400, unused: true).decisions
    assert_equal [false, false], both.map(&:remove), "the old one is still used, the unused one is recent"
    assert [old, recent].all? { |path| File.exist?(path) }, "decisions alone remove nothing"
  end

  it "lists Passenger's agents with their compile, kept by --unused and pruned by age" do
    dir = File.join(@root, "passenger-agents", "6.2.1-3f4db522ef1f")
    FileUtils.mkdir_p(dir)
    File.write(File.join(dir, "PassengerAgent"), "#!/bin/sh\n")
    File.chmod(0o755, File.join(dir, "PassengerAgent"))
    File.write(File.join(dir, "build.json"),
               JSON.generate("version" => "6.2.1", "compiler" => "g++ (Debian 12.2.0-14) 12.2.0",
                             "compiled_at" => "2026-12-03T09:37:00Z", "duration_s" => 252.4, "objects" => 92))
    age(dir, 40)

    agent = inventory.items.find { |item| item.kind == "agent" }
    assert_equal "Passenger 6.2.1's agent, compiled in 4m12s (g++ (Debian 12.2.0-14) 12.2.0)", agent.name
    assert_equal [dir], agent.paths

    kept = Rackbench::CacheInventory::Prune.new([agent], unused: true).decisions.first
    assert_equal [false, "kept by --unused (prune it with --older-than)"], [kept.remove, kept.reason]
    assert_equal [true, "unused for 40 d"],
                 Rackbench::CacheInventory::Prune.new([agent], older_than_s: 30 * 86_400).decisions.first
                                                 .then { |d| [d.remove, d.reason] }
  end

  it "lists the bundled gems fetched for builds, kept by --unused and pruned by age, never as a leftover" do
    dir = File.join(@root, "rubies", "gems")
    FileUtils.mkdir_p(dir)
    %w[minitest-5.25.4 rake-13.2.1].each { |name| File.write(File.join(dir, "#{name}.gem"), name) }
    age(dir, 40)

    items = inventory.items
    fetched = items.find { |item| item.kind == "bundled" }
    assert_equal "bundled gems fetched for ruby builds (2 .gem files)", fetched.name
    assert_equal [dir], fetched.paths
    assert_empty items.select { |item| item.kind == "leftover" }

    kept = Rackbench::CacheInventory::Prune.new([fetched], unused: true).decisions.first
    assert_equal [false, "kept by --unused (prune it with --older-than)"], [kept.remove, kept.reason]
    assert_equal [true, "unused for 40 d"],
                 Rackbench::CacheInventory::Prune.new([fetched], older_than_s: 30 * 86_400).decisions.first
                                                 .then { |d| [d.remove, d.reason] }
  end

  it "removes what a stopped build left, and refuses a prune without a condition" do
    leftover = File.join(@root, "rubies", "work", "dddddddddddddddd-999999999")
    FileUtils.mkdir_p(leftover)
    failed_lock = File.join(@root, "rubies", "eeeeeeeeeeeeeeee.lock")
    File.write(failed_lock, "")

    decisions = Rackbench::CacheInventory::Prune.new(inventory.items, older_than_s: 10 * 86_400).run!

    assert_equal [["leftover", true, "left by a build that stopped"]] * 2, decisions.map { |d| [d.item.kind, d.remove, d.reason] }
    refute File.exist?(leftover)
    refute File.exist?(failed_lock)
    error = assert_raises(Rackbench::UsageError) { Rackbench::CacheInventory::Prune.new([]) }
    assert_match(/--older-than DURATION or --unused/, error.message)
  end

  it "prints the list and a prune through the command, and refuses prune options without prune" do
    build("aaaaaaaaaaaaaaaa", name: "old", users: [])
    env = { "RACKBENCH_CACHE" => @root }

    code, out, = cli("cache", env: env)
    assert_equal 0, code
    assert_match(/build\s+\| ruby 'old' 3.4.5 aaaaaaaaaaaaaaaa/, out)

    code, out, = cli("cache", "prune", "--unused", "--dry-run", env: env)
    assert_equal 0, code
    assert_match(/would remove build ruby 'old' .*: no stored experiment uses it/, out)
    assert File.exist?(File.join(@root, "rubies", "aaaaaaaaaaaaaaaa"))

    code, _out, err = cli("cache", "--unused", env: env)
    assert_equal 2, code
    assert_equal "rackbench: --older-than, --unused and --dry-run go with `rackbench cache prune`\n", err
  end
end
