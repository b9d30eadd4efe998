# frozen_string_literal: true

require "digest"
require "fileutils"
require "json"
require "yaml"
require_relative "cache_root"
require_relative "holder_lock"
require_relative "cache_use"

module Rackbench
  # One Bundler environment per (app, ruby, server gems): a generated
  # Gemfile that evaluates the app's own Gemfile plus the server's gem
  # lines, its own Gemfile.lock, and gems installed once per ruby engine
  # and ABI. Created on first use, reused afterwards. See doc/rubies.md.
  #
  #   root/<app>-<digest>/Gemfile, Gemfile.lock, .bundle/, bundle.log
  #   root/gems/<engine>-<abi>/        BUNDLE_PATH, shared by all environments of that ruby
  #   root/gems/<engine>-<abi>.lock    flock held while installing
  #
  # All variants of one ruby (ruby, ruby --yjit, ruby + jemalloc) share an
  # environment: options and variables change how the ruby runs, not which
  # gems it needs. So an environment knows the install only, never a
  # variant: the interpreter options are given to #exec_prefix and the
  # variant's variables are added by whoever starts the server, per trial.
  # (It once kept the first variant it was built with, and every variant
  # sharing it ran with that one's options and variables.)
  class BundleEnv
    autoload :Failure, File.expand_path("bundle_env/failure", __dir__)
    autoload :Gemfile, File.expand_path("bundle_env/gemfile", __dir__)
    autoload :Groups, File.expand_path("bundle_env/groups", __dir__)
    autoload :LockComparison, File.expand_path("bundle_env/lock_comparison", __dir__)
    autoload :Lockfile, File.expand_path("bundle_env/lockfile", __dir__)
    autoload :Progress, File.expand_path("bundle_env/progress", __dir__)
    autoload :Siblings, File.expand_path("bundle_env/siblings", __dir__)

    LAUNCHER = File.expand_path("bundle_env/launcher.rb", __dir__)
    # Part of the digest: bump it when the generated layout changes, so old
    # environments are not reused.
    LAYOUT_VERSION = 1
    INSTALL_TIMEOUT_S = 1800.0
    # While another process installs into the same gem directory, how often
    # a waiting run says it is still waiting.
    LOCK_NOTICE_INTERVAL_S = HolderLock::NOTICE_INTERVAL_S
    CHECK_TIMEOUT_S = 120.0
    # Bundler's words when locked versions cannot satisfy the Gemfile
    # (2.3: "Bundler could not find compatible versions for gem ..."; 2.4+:
    # "Could not find compatible versions").
    RESOLUTION_CONFLICT = /could not find compatible versions/i.freeze
    # The settings an environment writes into its own .bundle/config; any
    # other setting found there is kept.
    OWN_SETTINGS = %w[BUNDLE_WITHOUT BUNDLE_WITH BUNDLE_FORCE_RUBY_PLATFORM].freeze
    RESOLVE_AFRESH_NOTE = "the lockfile seeded from another environment does not fit this Gemfile: resolving afresh"
    # Runs `gem install` with this ruby's RubyGems, whatever `gem` is on PATH.
    GEM_COMMAND = 'require "rubygems/gem_runner"; require "rubygems/exceptions"; ' \
                  "begin; Gem::GemRunner.new.run(ARGV.dup); rescue Gem::SystemExitException => e; exit(e.exit_code); end"

    # The cache directory: $RACKBENCH_CACHE/bundles, else
    # ${XDG_CACHE_HOME:-~/.cache}/rackbench/bundles.
    def self.default_root(env = ENV)
      File.join(CacheRoot.path(env), "bundles")
    end

    attr_reader :app_dir, :gemfile_extra, :install, :root, :groups
    # The gems the experiment pins (name => requirement parts), and the
    # lockfile text this environment starts from instead of the app's own
    # (its gem set's, resolved by another ruby), or nil.
    attr_reader :gem_pins, :lock_seed
    # Whether Bundler installs every gem from its source (its
    # force_ruby_platform setting: native gems compiled on this ruby, never
    # a precompiled platform gem).
    attr_reader :force_ruby_platform
    alias force_ruby_platform? force_ruby_platform

    # :app_dir :: the app's directory (its Gemfile and Gemfile.lock, when present, are used)
    # :gemfile_extra :: Gemfile lines the server needs, e.g. ['gem "puma", ">= 6"'] (default: [])
    # :install :: the Rubies::Install to install for
    # :root :: cache directory (default: BundleEnv.default_root)
    # :parent_env :: environment bundler commands start from, minus leaks (default: ENV)
    # :install_timeout_s :: deadline for `bundle install` (default: 1800)
    # :groups :: the Gemfile groups to install and load, a Groups (default: Groups.all, every group)
    # :gem_pins :: gem name => Array of requirement parts the Gemfile pins, replacing the app's own
    #              requirement (Gemfile.render) (default: {})
    # :lock_seed :: lockfile text the environment starts from, in place of the app's Gemfile.lock or a
    #               sibling's: the lock of its gem set (Trial::Http::GemSets), whose versions Bundler
    #               then keeps (default: nil)
    # :force_ruby_platform :: Bundler's force_ruby_platform, in the environment's own config: every native
    #                         gem is compiled from its source gem on this ruby (`gems: { force_ruby_platform:
    #                         true }`) (default: false)
    def initialize(app_dir:, install:, gemfile_extra: [], root: self.class.default_root, parent_env: ENV,
                   install_timeout_s: INSTALL_TIMEOUT_S, groups: Groups.all, gem_pins: {}, lock_seed: nil,
                   force_ruby_platform: false)
      @app_dir = File.expand_path(app_dir)
      @groups = groups
      @gem_pins = gem_pins.to_h { |name, parts| [name.to_s.dup.freeze, Array(parts).map { |p| p.to_s.dup.freeze }.freeze] }
                          .freeze
      @lock_seed = lock_seed&.dup&.freeze
      @force_ruby_platform = force_ruby_platform == true
      @gemfile_extra = gemfile_extra.map { |line| line.to_s.dup.freeze }.freeze
      @install = install
      @root = File.expand_path(root)
      @parent_env = parent_env
      @install_timeout_s = install_timeout_s
      @ready = false
    end

    # Short digest of what decides the environment's content: the app's
    # location, Gemfile and Gemfile.lock, the extra lines, the ruby, the
    # groups (when any is left out or added), the pinned gems and the lock
    # it is seeded with (when there are any), and force_ruby_platform when
    # it is on.
    def digest
      @digest ||= Digest::SHA256.hexdigest(JSON.generate(digest_inputs))[0, 16]
    end

    def dir
      File.join(root, "#{app_name}-#{digest}")
    end

    def gemfile_path
      File.join(dir, "Gemfile")
    end

    def lockfile_path
      File.join(dir, "Gemfile.lock")
    end

    def app_config_dir
      File.join(dir, ".bundle")
    end

    def log_path
      File.join(dir, "bundle.log")
    end

    # BUNDLE_PATH: gems are installed once per ruby engine and ABI version
    # (Bundler adds <engine>/<abi> below it, as RubyGems does for GEM_HOME;
    # RubyGems also keeps native extensions of static and shared builds
    # apart).
    def install_path
      File.join(root, "gems", "#{install.engine}-#{install.abi_version}")
    end

    # Where the gems actually land: Bundler's <engine>/<abi> below install_path.
    def gem_dir
      self.class.gem_dir(install, root: root)
    end

    # The gem directory every environment of +install+ (a Rubies::Install)
    # installs into under +root+, whether or not one exists yet: what is
    # there before a run installs anything (Passenger's agent, compiled
    # into its gem).
    def self.gem_dir(install, root: default_root)
      File.join(File.expand_path(root), "gems", "#{install.engine}-#{install.abi_version}", install.engine,
                install.abi_version)
    end

    def lock_path
      "#{install_path}.lock"
    end

    # Held shared by every process that uses this environment (CacheUse).
    def in_use_lock_path
      File.join(dir, "in-use.lock")
    end

    # The results directories that used it (CacheUse).
    def users_path
      File.join(dir, "users")
    end

    # The environment variables a server command needs, as overrides for
    # Process.spawn (nil removes a variable): this bundle's BUNDLE_GEMFILE,
    # BUNDLE_PATH and BUNDLE_APP_CONFIG, BUNDLE_FROZEN so the lock cannot
    # change mid-experiment, and the removal of what a parent under `bundle
    # exec` or a version manager leaks (RUBYOPT, RUBYLIB, GEM_HOME,
    # GEM_PATH, BUNDLER_*; see Rubies::CleanEnv). Nothing of any variant.
    def env(parent = @parent_env)
      Rubies::CleanEnv.overrides(parent).merge(bundle_variables)
    end

    # Only this bundle's own variables (BUNDLE_GEMFILE, BUNDLE_PATH,
    # BUNDLE_APP_CONFIG, BUNDLE_FROZEN), for a caller that builds the whole
    # environment itself.
    def bundle_variables(frozen: true)
      { "BUNDLE_GEMFILE" => gemfile_path, "BUNDLE_PATH" => install_path, "BUNDLE_APP_CONFIG" => app_config_dir,
        "BUNDLE_FROZEN" => frozen.to_s }
    end

    # The argv prefix that runs a gem executable of this bundle with the
    # given interpreter command (a Rubies::Variant#command: this install's
    # path and the variant's options): append the executable's name and
    # its arguments, e.g. exec_prefix(variant.command) + ["puma", "-b",
    # "tcp://127.0.0.1:9292"]. Run it with #env. Raises ArgumentError for an
    # interpreter other than this bundle's install, SetupError when no
    # Bundler is available yet (call #ensure_installed! first).
    def exec_prefix(interpreter = [install.path])
      unless interpreter.first == install.path
        raise ArgumentError, "#{interpreter.first} is not the ruby of this bundle (#{install.path})"
      end

      lib = bundler_lib
      [*interpreter, *(lib ? ["-I", lib] : []), LAUNCHER]
    end

    # The text of this environment's lockfile; raises SetupError when it is
    # not installed.
    def lockfile_text
      File.read(lockfile_path)
    rescue Errno::ENOENT
      raise SetupError, "no Gemfile.lock in #{dir}: the bundle is not installed"
    end

    # Hash of gem name => version from this environment's lockfile (see
    # Lockfile.gem_versions). Raises SetupError when it is not installed.
    def gem_versions
      Lockfile.gem_versions(lockfile_text)
    end

    # Hash of gem name => the platforms this environment's lockfile locks
    # it for ("ruby": the source gem; see Lockfile.gem_platforms). Raises
    # SetupError when it is not installed.
    def gem_platforms
      Lockfile.gem_platforms(lockfile_text)
    end

    # The text of the app's own Gemfile.lock, or nil when it has none.
    def app_lockfile_text
      read_app_file("Gemfile.lock")
    end

    # The `bundle` script this environment uses: the ruby's own Bundler, or
    # the one installed into gem_dir for a ruby that has none. nil if neither.
    def bundler_bin
      install.bundler_bin || Dir.glob(File.join(gem_dir, "gems", "bundler-*", "exe", "bundle"))
                                .max_by { |path| Gem::Version.new(path[%r{/bundler-([^/]+)/exe/bundle\z}, 1]) }
    end

    # Installs the bundle unless it already is (its lockfile exists and
    # `bundle check` passes; checked once per BundleEnv object). Holds an
    # exclusive lock on the ruby's gem directory meanwhile, so concurrent
    # runs install one after the other. Returns :installed or :reused.
    # Raises SetupError with Bundler's last meaningful line and the log's
    # path when the install fails, or with the reason when the cache
    # cannot be written (full disk, permissions).
    #
    # :log :: file that receives Bundler's output (default: log_path)
    # :before_install :: called with this BundleEnv just before a real install starts, e.g. to print a notice (default: nil)
    # :waiting :: called with the holder (a LockHolder: pid, since when, its log) and the seconds waited so far when
    #             another process holds the install lock: at once, then every LOCK_NOTICE_INTERVAL_S, so a wait
    #             never looks like a hang (default: nil)
    # :extra_env :: variables added to Bundler's environment, e.g. the run's marker (Watchdog.marker_env; default: {})
    # :progress :: a Progress fed Bundler's output while `bundle install` runs (default: nil)
    # :user :: the results directory of the run that uses it, recorded for `rackbench cache` (default: nil)
    #
    # The process then holds the environment (CacheUse: `rackbench cache
    # prune` leaves it alone) until it exits.
    def ensure_installed!(log: log_path, before_install: nil, waiting: nil, extra_env: {}, progress: nil, user: nil)
      return :reused if @ready

      @extra_env = extra_env
      # Held before anything is written, so that a prune never removes it
      # under this run.
      CacheUse.hold(in_use_lock_path, users_path: users_path, user: user)
      FileUtils.mkdir_p([dir, app_config_dir, install_path])
      outcome = File.open(lock_path, File::RDWR | File::CREAT, 0o644) do |lock|
        HolderLock.acquire(lock, waiting: waiting, log: log)
        write_files
        if installed?(log)
          :reused
        else
          before_install&.call(self)
          install!(log, progress)
          :installed
        end
      end
      @ready = true
      outcome
    rescue SystemCallError => e
      raise SetupError, "cannot prepare the bundle in #{dir}: #{e.message.sub(/ @ \w+/, "")}"
    end

    def inspect
      "#<#{self.class.name} #{dir}>"
    end

    private

    # The groups are added only when they choose something, so that an
    # environment of every group keeps the digest it had before groups were
    # honoured (and its installed cache).
    def digest_inputs
      inputs = [LAYOUT_VERSION, app_dir, read_app_file("Gemfile"), read_app_file("Gemfile.lock"), gemfile_extra,
                install.path, install.engine, install.version]
      inputs << { "without" => groups.without, "with" => groups.with } unless groups.none?
      inputs << { "pins" => gem_pins } unless gem_pins.empty?
      inputs << { "lock_seed" => Digest::SHA256.hexdigest(lock_seed) } if lock_seed
      inputs << { "force_ruby_platform" => true } if force_ruby_platform?
      inputs
    end

    def app_name
      File.basename(app_dir).gsub(/[^A-Za-z0-9_.-]/, "_")
    end

    def read_app_file(name)
      File.read(File.join(app_dir, name))
    rescue Errno::ENOENT
      nil
    end

    # The lib directory beside the bundle script (absent when Bundler is
    # part of the ruby's standard library, as in Debian's JRuby).
    def bundler_lib
      bin = bundler_bin
      raise SetupError, "no Bundler for #{install.name} (#{install.path}): install the bundle first" unless bin

      lib = File.expand_path("../lib", File.dirname(bin))
      lib if File.directory?(lib)
    end

    # Writes the Gemfile when its content changed, and seeds a new
    # lockfile: from the lock of its gem set when it has one (lock_seed);
    # else from the app's own, so the app's locked versions are kept; for
    # an app without one, from the lockfile of another environment of the
    # same app and gem directory (Siblings), so that the environments of
    # one ruby resolve the same versions and reuse the gems one of them
    # installed (and compiled) instead of each resolving the newest.
    def write_files
      app_gemfile = File.join(app_dir, "Gemfile")
      content = Gemfile.render(app_gemfile: File.file?(app_gemfile) ? app_gemfile : nil, extra: gemfile_extra,
                               pins: gem_pins)
      write_atomically(gemfile_path, content) unless read_file(gemfile_path) == content
      write_config
      Siblings.mark(self)
      return if File.exist?(lockfile_path)

      seed = lock_seed || read_app_file("Gemfile.lock") || Siblings.seed(self)
      write_atomically(lockfile_path, Gemfile.seed_lock(seed)) if seed
    end

    # The environment's own .bundle/config (BUNDLE_APP_CONFIG): the groups
    # and force_ruby_platform, in Bundler's format, read by install, check
    # and the server's bundler/setup alike (at run time Bundler picks the
    # source gem's spec only when the setting is on there too).
    def write_config
      path = File.join(app_config_dir, "config")
      existing = read_file(path)
      settings = existing ? (YAML.safe_load(existing) || {}) : {}
      wanted = settings.reject { |key, _| OWN_SETTINGS.include?(key) }.merge(groups.settings)
      wanted["BUNDLE_FORCE_RUBY_PLATFORM"] = "true" if force_ruby_platform?
      return if wanted == settings && (existing || wanted.empty?)

      write_atomically(path, YAML.dump(wanted))
    end

    def installed?(log)
      return false unless File.exist?(lockfile_path) && bundler_bin
      return false unless run(["check"], log: log, timeout_s: CHECK_TIMEOUT_S).success?
      return true unless empty_lock?

      # `bundle check` can call a lock that resolved to no gem at all
      # satisfied (a seed whose platforms Bundler could not use): the
      # server's Bundler.setup would refuse it, so it is resolved afresh.
      File.delete(lockfile_path)
      File.open(log, "a") { |f| f.puts("== the lockfile locked no gem: resolving afresh") }
      false
    end

    # Whether the lockfile locks no gem although the Gemfile asks for some
    # (every environment's Gemfile names at least its server's gem).
    def empty_lock?
      (Lockfile.gem_versions(File.read(lockfile_path)).keys - ["bundler"]).empty?
    end

    def install!(log, progress)
      install_bundler!(log) unless bundler_bin
      progress&.start(total: locked_gem_count)
      result = bundle_install(log, progress)
      if !result.success? && resolve_afresh?(result, log)
        File.delete(lockfile_path)
        File.open(log, "a") { |f| f.puts("== #{RESOLVE_AFRESH_NOTE}") }
        result = bundle_install(log, progress)
      end
      progress&.finish(ok: result.success?)
      raise SetupError, failure("bundle install", result, log) unless result.success?
    end

    def bundle_install(log, progress)
      command = -> { run(["install"], log: log, timeout_s: @install_timeout_s) }
      progress ? progress.follow(log, &command) : command.call
    end

    # A lockfile seeded from a sibling (the app has none of its own) is a
    # preference, not the app's choice: when its versions cannot satisfy
    # this Gemfile (a server that needs Rack 2 where the sibling's locked
    # gems need Rack 3), Bundler refuses to resolve rather than unlock
    # them; the environment then resolves afresh, as without a sibling.
    def resolve_afresh?(result, log)
      !result.timed_out && lock_seed.nil? && read_app_file("Gemfile.lock").nil? && File.exist?(lockfile_path) &&
        tail(log).match?(RESOLUTION_CONFLICT)
    end

    # How many gems the install starts from (the lockfile seeded from the
    # app's, Bundler included), or nil when there is no lockfile yet.
    def locked_gem_count
      return nil unless File.exist?(lockfile_path)

      versions = Lockfile.gem_versions(File.read(lockfile_path))
      versions.size + (versions.key?("bundler") ? 0 : 1)
    end

    # For a ruby without Bundler: install one into gem_dir with the ruby's
    # own RubyGems (which picks the newest Bundler that supports the ruby).
    def install_bundler!(log)
      FileUtils.mkdir_p(gem_dir)
      argv = [install.path, "-e", GEM_COMMAND, "--", "install", "--no-document", "--install-dir", gem_dir, "bundler"]
      result = command(argv, log: log, timeout_s: @install_timeout_s)
      raise SetupError, failure("gem install bundler", result, log) unless result.success? && bundler_bin
    end

    def run(args, log:, timeout_s:)
      command([install.path, bundler_bin, *args], log: log, timeout_s: timeout_s)
    end

    # Runs argv with the bundle's variables, output appended to log after a
    # header line; remembers where this command's output starts.
    def command(argv, log:, timeout_s:)
      FileUtils.mkdir_p(File.dirname(log))
      File.open(log, "a") { |f| f.puts("== #{Time.now.utc.strftime("%FT%TZ")} #{argv.join(" ")}") }
      @output_offset = File.size(log)
      env = Rubies::CleanEnv.clean(@parent_env).merge(bundle_variables(frozen: false)).merge(@extra_env || {})
      begin
        Rubies::Child.run(argv, env: env, timeout_s: timeout_s, log_path: log, chdir: dir)
      rescue SystemCallError => e
        raise SetupError, "cannot run #{install.path}: #{e.message}"
      end
    end

    def failure(what, result, log)
      reason = result.timed_out ? "timed out after #{format("%g", @install_timeout_s)} s" : Failure.reason(tail(log))
      "#{what} failed for #{File.basename(app_dir)} on #{install.name}: #{reason} (log: #{log})"
    end

    def tail(log)
      File.open(log) do |f|
        f.seek(@output_offset)
        f.read
      end
    end

    def read_file(path)
      File.read(path)
    rescue Errno::ENOENT
      nil
    end

    def write_atomically(path, content)
      tmp = "#{path}.#{Process.pid}.tmp"
      File.write(tmp, content)
      File.rename(tmp, path)
    end
  end
end
