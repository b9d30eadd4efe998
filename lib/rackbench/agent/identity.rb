# The identity report of a server process, loaded by rackbench's launcher
# (bundle_env/launcher.rb) into every server it starts. Each process of
# the server writes what it really runs as into the trial's directory:
#
#   $RACKBENCH_TRIAL_DIR/identity/<pid>.json
#
# the main process when the launcher starts it, and every process forked
# from it through Ruby (Process._fork, Ruby 3.1+) right after the fork:
# RUBY_DESCRIPTION, the executable and libruby really mapped, which JIT is
# on, the values of the variables the trial set, the server gem's version,
# every gem activated (Gem.loaded_specs: under Bundler, the whole bundle).
# The runner compares this with the trial's configuration before measuring
# (Rackbench::Trial::Identity::Check): a label is a claim, this is its proof.
#
# This runs inside the measured server, under every benchmarked ruby:
# no gem is required (a hand-written JSON writer instead of json, which an
# app might not load), it parses on old rubies (JRuby 9.x is Ruby 2.5/2.6),
# and it never raises into the server: a report that cannot be written is
# a warning on stderr, and the runner then fails the trial for want of it.
require_relative "plain_json"
require_relative "whole_file"

module RackbenchIdentity
  # The variables whose values to report: a comma-separated list set by
  # the runner (the trial's checked variables).
  ENV_LIST = "RACKBENCH_IDENTITY_ENV".freeze
  SERVER_GEM = "RACKBENCH_SERVER_GEM".freeze
  EXEC_MARK = "RACKBENCH_EXECED_BY".freeze
  # Set by the runner for a server (not for a benchmark script): start the
  # watcher that answers the runner's late question (see #watch).
  LATE = "RACKBENCH_IDENTITY_LATE".freeze
  ASK_FILE = "ask".freeze
  WATCH_INTERVAL_S = 0.05

  module_function

  def directory
    dir = ENV["RACKBENCH_TRIAL_DIR"]
    dir && File.join(dir, "identity")
  end

  # Writes this process's report; event is "exec" or "fork".
  def report(event)
    dir = directory
    return unless dir

    watching = watch(dir)
    write(File.join(dir, "#{Process.pid}.json"), describe(event).merge("watching" => watching))
  end

  def write(path, data)
    RackbenchWholeFile.write(path, RackbenchPlainJson.generate(data), agent: "identity")
  end

  # What only a booted app knows (the database pool its framework really
  # configured) cannot be reported at exec or fork, before the app is
  # loaded. So, in a server, a watcher thread waits for the runner's
  # question (the file "ask" in the identity directory, written once the
  # server is ready and before anything is measured), answers with
  # <pid>.late.json and ends. Until then it only sleeps and looks for a
  # file; it is gone before the measured window. Returns whether a watcher
  # runs (the runner waits for an answer only from those).
  def watch(dir)
    return false unless ENV[LATE] == "1" && defined?(Thread)

    ask = File.join(dir, ASK_FILE)
    Thread.new do
      # Puma lists the threads an app starts while it boots unless marked so.
      Thread.current[:fork_safe] = true
      sleep WATCH_INTERVAL_S until File.exist?(ask)
      write(File.join(dir, "#{Process.pid}.late.json"), late)
    end
    true
  rescue StandardError
    false
  end

  def late
    { "pid" => Process.pid, "active_record_pool" => active_record_pool, "gc_compact_count" => gc_compact["count"] }
  end

  # The size of ActiveRecord's connection pool for the app's database, when
  # the app loaded ActiveRecord::Base; nil otherwise. Nothing is loaded
  # here: a Base still registered for autoload counts as not loaded.
  def active_record_pool
    return nil unless Object.const_defined?(:ActiveRecord, false)

    ar = Object.const_get(:ActiveRecord, false)
    return nil unless ar.is_a?(Module) && ar.autoload?(:Base).nil? && ar.const_defined?(:Base, false)

    base = ar.const_get(:Base, false)
    base.respond_to?(:connection_pool) ? base.connection_pool.size : nil
  rescue StandardError
    nil # no database configured
  end

  def describe(event)
    {
      "pid" => Process.pid, "ppid" => Process.ppid, "event" => event,
      "description" => RUBY_DESCRIPTION,
      "engine" => defined?(RUBY_ENGINE) ? RUBY_ENGINE : "ruby",
      "engine_version" => defined?(RUBY_ENGINE_VERSION) ? RUBY_ENGINE_VERSION : RUBY_VERSION,
      "ruby_version" => RUBY_VERSION,
      "exe" => real_path("/proc/self/exe"),
      "libruby" => mapped_library(/libruby/),
      "build" => build_key,
      "jit" => jit,
      "env" => reported_env,
      "server_gem" => server_gem,
      "preloaded" => preloaded,
      "malloc" => malloc,
      "gc_compact" => gc_compact,
      "bundle_without" => bundle_without,
      "force_ruby_platform" => force_ruby_platform,
      "gems" => loaded_gems,
      "gem_platforms" => gem_platforms
    }
  end

  # Every gem activated in this process, name => version: under Bundler
  # (the launcher loads this after bundler/setup), every gem of the bundle,
  # plus the default gems the ruby activated before it. nil without
  # RubyGems.
  def loaded_gems
    return nil unless defined?(Gem) && Gem.respond_to?(:loaded_specs)

    gems = {}
    Gem.loaded_specs.each { |name, spec| gems[name.to_s] = spec.version.to_s }
    gems
  rescue StandardError
    nil
  end

  # How each native gem activated in this process was built, name =>
  # platform: a precompiled gem's platform ("x86_64-linux-gnu"), or "ruby"
  # for a source gem whose extension was compiled on install. Pure-Ruby
  # gems are left out. nil without RubyGems.
  def gem_platforms
    return nil unless defined?(Gem) && Gem.respond_to?(:loaded_specs)

    platforms = {}
    Gem.loaded_specs.each do |name, spec|
      platform = spec.platform.to_s
      compiled = spec.respond_to?(:extensions) && !Array(spec.extensions).empty?
      platforms[name.to_s] = platform if platform != "ruby" || compiled
    end
    platforms
  rescue StandardError
    nil
  end

  # Bundler's force_ruby_platform in this process (true: the bundle's
  # native gems are their source gems), or nil when Bundler is not loaded.
  def force_ruby_platform
    return nil unless defined?(Bundler) && Bundler.respond_to?(:settings)

    Bundler.settings[:force_ruby_platform] ? true : false
  rescue StandardError
    nil
  end

  # Allocators that replace glibc's malloc when mapped (LD_PRELOAD, or a
  # ruby linked with one), by the start of the library's file name.
  MALLOCS = { "jemalloc" => /\Alibjemalloc\b/, "tcmalloc" => /\Alibtcmalloc/, "mimalloc" => /\Alibmimalloc\b/ }.freeze

  # The malloc this process really runs: the first replacement allocator
  # mapped into it (/proc/self/maps), or glibc's when none is.
  def malloc
    MALLOCS.each do |name, pattern|
      path = mapped_library(pattern)
      return { "name" => name, "path" => path } if path
    end
    { "name" => "glibc", "path" => nil }
  end

  # Whether this ruby can compact its heap (GC.compact: CRuby 2.7+ on
  # platforms with the needed memory protection), and how many times this
  # process's heap was compacted so far: a worker forked after the
  # server's before_fork compaction inherits its parent's count.
  def gc_compact
    supported = GC.respond_to?(:compact) && GC.respond_to?(:stat) && GC.stat.key?(:compact_count)
    return { "supported" => false, "count" => nil } unless supported

    { "supported" => true, "count" => GC.stat(:compact_count) }
  rescue StandardError, NotImplementedError
    { "supported" => false, "count" => nil }
  end

  # The Gemfile groups Bundler leaves out in this process (its `without`
  # setting, sorted names), or nil when Bundler is not loaded.
  def bundle_without
    return nil unless defined?(Bundler) && Bundler.respond_to?(:settings)

    Array(Bundler.settings[:without]).map(&:to_s).sort
  rescue StandardError
    nil
  end

  # The JIT that compiles this process's code: "yjit", "mjit", "rjit",
  # "jvm" (JRuby: always on), or nil for the interpreter alone.
  def jit
    return "jvm" if defined?(RUBY_ENGINE) && RUBY_ENGINE == "jruby"
    return nil unless defined?(RubyVM)

    %w[YJIT RJIT MJIT].each do |name|
      next unless RubyVM.const_defined?(name)

      mod = RubyVM.const_get(name)
      return name.downcase if mod.respond_to?(:enabled?) && mod.enabled?
    end
    nil
  end

  def reported_env
    names = ENV.fetch(ENV_LIST, "").split(",")
    result = {}
    names.each { |name| result[name] = ENV[name] }
    result
  end

  # The server gem as activated by Bundler, and whether code from it is
  # loaded yet (in the main process at exec time it usually is not; in a
  # forked worker it is).
  def server_gem
    name = ENV[SERVER_GEM]
    return nil unless name && defined?(Gem) && Gem.respond_to?(:loaded_specs)

    spec = Gem.loaded_specs[name]
    return { "name" => name, "version" => nil, "loaded" => false } unless spec

    dir = spec.full_gem_path
    loaded = $LOADED_FEATURES.any? { |feature| feature.start_with?(dir) }
    { "name" => name, "version" => spec.version.to_s, "loaded" => loaded }
  end

  # Which of the libraries named in LD_PRELOAD are really mapped.
  def preloaded
    ENV.fetch("LD_PRELOAD", "").split(/[\s:]+/).reject(&:empty?).map do |lib|
      # A symlink (libjemalloc.so) is mapped under its target's name.
      names = [File.basename(lib), File.basename(real_path(lib) || lib)].uniq
      pattern = Regexp.union(names.map { |name| /\A#{Regexp.escape(name)}\z/ })
      { "name" => lib, "mapped" => !mapped_library(pattern).nil? }
    end
  end

  # The real path of the first mapped file whose name matches pattern.
  def mapped_library(pattern)
    File.foreach("/proc/self/maps") do |line|
      path = line.split(" ", 6)[5].to_s.strip
      return path if path.start_with?("/") && File.basename(path) =~ pattern
    end
    nil
  rescue SystemCallError, IOError
    nil
  end

  # A ruby rackbench built from source keeps its recipe in its install
  # (<prefix>/rackbench-recipe.json, beside bin/ruby's directory): the key
  # of the build this process really runs, or nil for any other ruby.
  # Read with a pattern, since no JSON parser may be loaded here.
  def build_key
    exe = real_path("/proc/self/exe")
    return nil unless exe

    text = File.read(File.join(File.dirname(File.dirname(exe)), "rackbench-recipe.json"))
    text[/"key"\s*:\s*"(\h{16})"/, 1]
  rescue SystemCallError, IOError
    nil
  end

  def real_path(path)
    File.realpath(path)
  rescue SystemCallError, NotImplementedError
    nil
  end

  # Re-reports in a child forked through Ruby. Servers fork workers with
  # Process.fork or Kernel#fork, which both call Process._fork (Ruby 3.1+).
  # Children forked in C (iodine, agoo) never run this: the runner checks
  # them from outside as copies of a reporting parent.
  module ForkHook
    def _fork
      pid = super
      RackbenchIdentity.report("fork") if pid.zero?
      pid
    end
  end

  # Rubies before 3.1 have no Process._fork: hook the two methods servers
  # fork with instead. Kernel#fork and Process.fork return nil in the child
  # (without a block); with a block, the child reports before running it.
  module LegacyForkHook
    def fork(&block)
      return super { RackbenchIdentity.report("fork"); block.call } if block

      pid = super
      RackbenchIdentity.report("fork") if pid.nil?
      pid
    end
  end
end

RackbenchIdentity.report("exec")
# Set after the report, in this process's ENV only: a process this server
# later exec's (a helper an app spawns) carries it in its environment
# block, while a fork keeps a copy of the block this process was started
# with, which does not. That tells the runner a helper from a worker.
ENV[RackbenchIdentity::EXEC_MARK] = Process.pid.to_s
if Process.respond_to?(:_fork)
  Process.singleton_class.prepend(RackbenchIdentity::ForkHook)
elsif Process.respond_to?(:fork)
  Process.singleton_class.prepend(RackbenchIdentity::LegacyForkHook)
  Kernel.prepend(RackbenchIdentity::LegacyForkHook)
end
