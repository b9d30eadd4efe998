# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "stringio"
require "rackbench/rubies"
require "rackbench/bundle_env"

# Hermetic: paths, digests, environment and lockfile parsing, and the
# install flow driven through a fake ruby (test/fixtures/rubies/
# fake_bundler_ruby) that plays Bundler. test/integration/bundle_env_test.rb
# installs for real.
module BundleEnvSpec
  FIXTURES = File.expand_path("../fixtures/rubies", __dir__)
  Install = Rackbench::Rubies::Install
  Variant = Rackbench::Rubies::Variant
  BundleEnv = Rackbench::BundleEnv

  module Helpers
    def setup
      @tmp = Dir.mktmpdir("rackbench-bundle")
      @app = File.join(@tmp, "hello app")
      @root = File.join(@tmp, "cache")
      @calls = File.join(@tmp, "calls")
      FileUtils.mkdir_p(@app)
      File.write(File.join(@app, "Gemfile"), "source \"https://rubygems.org\"\ngem \"rack\"\n")
    end

    def teardown
      FileUtils.rm_rf(@tmp)
    end

    def install(path: "/usr/bin/ruby3.1", engine: "ruby", version: "3.1.2", abi: "3.1.0",
                bundler_bin: "/fake/bundler-2.3.15/exe/bundle", name: "ruby")
      Install.new(name: name, path: path, source: :path, engine: engine, version: version, abi_version: abi,
                  description: "#{engine} #{version}", jit: ["yjit"], bundler_bin: bundler_bin)
    end

    def variant(install = self.install, options: [], env: {})
      Variant.new(install: install, options: options, env: env)
    end

    def bundle_env(install = self.install, extra: ['gem "puma"'], parent_env: {}, app: @app)
      BundleEnv.new(app_dir: app, gemfile_extra: extra, install: install, root: @root, parent_env: parent_env)
    end

    # A BundleEnv whose ruby is the fake that plays Bundler.
    def fake_env(bundler_bin: File.join(@tmp, "bundler/exe/bundle"), parent_env: {}, **fake_vars)
      ruby = File.join(@tmp, "ruby")
      FileUtils.cp(File.join(FIXTURES, "fake_bundler_ruby"), ruby) unless File.exist?(ruby)
      parent = { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls }.merge(fake_vars).merge(parent_env)
      bundle_env(install(path: ruby, bundler_bin: bundler_bin), parent_env: parent)
    end

    def calls
      File.exist?(@calls) ? File.readlines(@calls, chomp: true) : []
    end
  end

  describe "Rackbench::BundleEnv layout" do
    include Helpers

    it "keeps one directory per app and ruby, and one gem directory per engine and ABI" do
      env = bundle_env

      assert_match(%r{\A#{Regexp.escape(@root)}/hello_app-\h{16}\z}, env.dir)
      assert_equal File.join(env.dir, "Gemfile"), env.gemfile_path
      assert_equal File.join(env.dir, "Gemfile.lock"), env.lockfile_path
      assert_equal File.join(env.dir, ".bundle"), env.app_config_dir
      assert_equal File.join(@root, "gems/ruby-3.1.0"), env.install_path
      assert_equal File.join(@root, "gems/ruby-3.1.0/ruby/3.1.0"), env.gem_dir
      assert_equal File.join(@root, "gems/jruby-2.6.0"),
                   bundle_env(install(engine: "jruby", version: "9.3.9.0", abi: "2.6.0")).install_path
    end

    it "changes the digest with the app's Gemfile and lock, the extra lines and the ruby, not with the variant" do
      base = bundle_env.digest

      assert_equal base, bundle_env.digest
      refute_equal base, bundle_env(extra: ['gem "puma", "~> 6.0"']).digest
      refute_equal base, bundle_env(install(path: "/opt/rubies/ruby-3.1.2/bin/ruby")).digest
      refute_equal base, bundle_env(install(version: "3.1.3")).digest
      File.write(File.join(@app, "Gemfile.lock"), "GEM\n")
      with_lock = bundle_env.digest
      refute_equal base, with_lock
      File.write(File.join(@app, "Gemfile"), "gem \"rack\", \"< 3\"\n")
      refute_equal with_lock, bundle_env.digest
    end

    it "changes the digest with pinned gems and a seeded lock, and keeps it without them" do
      plain = BundleEnv.new(app_dir: @app, install: install, root: @root)
      same = BundleEnv.new(app_dir: @app, install: install, root: @root, gem_pins: {}, lock_seed: nil)
      pinned = BundleEnv.new(app_dir: @app, install: install, root: @root, gem_pins: { "rails" => ["~> 7.2.0"] })
      other_pin = BundleEnv.new(app_dir: @app, install: install, root: @root, gem_pins: { "rails" => ["~> 8.0.0"] })
      seeded = BundleEnv.new(app_dir: @app, install: install, root: @root, lock_seed: "GEM\n")
      reseeded = BundleEnv.new(app_dir: @app, install: install, root: @root, lock_seed: "GEM\n  specs:\n")

      assert_equal plain.digest, same.digest
      assert_equal 4, [plain, pinned, other_pin, seeded].map(&:digest).uniq.size
      refute_equal seeded.digest, reseeded.digest
    end

    it "keeps its cache under RACKBENCH_CACHE, else the XDG cache directory, else ~/.cache" do
      assert_equal "/c/bundles", BundleEnv.default_root({ "RACKBENCH_CACHE" => "/c", "XDG_CACHE_HOME" => "/x" })
      assert_equal "/x/rackbench/bundles", BundleEnv.default_root({ "XDG_CACHE_HOME" => "/x" })
      assert_equal File.join(Dir.home, ".cache/rackbench/bundles"), BundleEnv.default_root({})
    end
  end

  describe "Rackbench::BundleEnv#env and #exec_prefix" do
    include Helpers

    # What `bundle exec rackbench` leaves in the environment.
    BUNDLE_EXEC_PARENT = {
      "PATH" => "/work/vendor/bin:/usr/bin:/bin", "BUNDLER_ORIG_PATH" => "/usr/bin:/bin",
      "RUBYOPT" => "-r/usr/lib/bundler/setup -rbundler/setup", "RUBYLIB" => "/usr/lib/bundler",
      "BUNDLE_GEMFILE" => "/work/main/Gemfile", "BUNDLE_BIN_PATH" => "/usr/lib/bundler/exe/bundle",
      "BUNDLER_VERSION" => "2.3.15", "BUNDLER_SETUP" => "/usr/lib/bundler/setup",
      "BUNDLER_ORIG_RUBYOPT" => "BUNDLER_ENVIRONMENT_PRESERVER_INTENTIONALLY_NIL",
      "GEM_HOME" => "/work/vendor", "GEM_PATH" => "/work/vendor", "BUNDLE_FROZEN" => "true",
      "BUNDLE_WITHOUT" => "development", "BUNDLE_MIRROR__RUBYGEMS__ORG" => "https://mirror.example", "HOME" => "/root"
    }.freeze

    it "points a server at this bundle and removes what a parent under bundle exec leaks" do
      env = bundle_env

      vars = env.env(BUNDLE_EXEC_PARENT)

      assert_equal({ "BUNDLE_GEMFILE" => env.gemfile_path, "BUNDLE_PATH" => env.install_path,
                     "BUNDLE_APP_CONFIG" => env.app_config_dir, "BUNDLE_FROZEN" => "true",
                     "PATH" => "/usr/bin:/bin" },
                   vars.compact)
      removed = vars.select { |_, v| v.nil? }.keys.sort
      assert_equal %w[BUNDLER_ORIG_PATH BUNDLER_ORIG_RUBYOPT BUNDLER_SETUP BUNDLER_VERSION BUNDLE_BIN_PATH
                      BUNDLE_WITHOUT GEM_HOME GEM_PATH RUBYLIB RUBYOPT], removed
      refute vars.key?("BUNDLE_MIRROR__RUBYGEMS__ORG"), "the user's mirror setting passes through"
      refute vars.key?("HOME")
    end

    it "gives the server a clean RUBYOPT" do
      assert_nil bundle_env.env(BUNDLE_EXEC_PARENT).fetch("RUBYOPT")
      assert_equal({}, bundle_env.env({ "HOME" => "/root" }).reject { |k, _| k.start_with?("BUNDLE_") })
    end

    # The bug this guards against: one environment served every variant of
    # its ruby with the options and variables of the variant that happened
    # to build it first.
    it "carries no variant: each variant's options go to exec_prefix, its variables nowhere in the bundle" do
      env = bundle_env
      plain = variant
      yjit = variant(options: ["--yjit"], env: { "MALLOC_ARENA_MAX" => "2" })

      assert_equal ["/usr/bin/ruby3.1", BundleEnv::LAUNCHER], env.exec_prefix(plain.command)
      assert_equal ["/usr/bin/ruby3.1", "--yjit", BundleEnv::LAUNCHER], env.exec_prefix(yjit.command)
      assert_equal ["/usr/bin/ruby3.1", BundleEnv::LAUNCHER], env.exec_prefix(plain.command), "plain stays plain"
      refute env.env(BUNDLE_EXEC_PARENT).key?("MALLOC_ARENA_MAX")
      refute_respond_to env, :variant
    end

    it "refuses to run another ruby's interpreter with this bundle" do
      error = assert_raises(ArgumentError) { bundle_env.exec_prefix(["/opt/ruby-3.3/bin/ruby", "--yjit"]) }
      assert_match(%r{/opt/ruby-3.3/bin/ruby is not the ruby of this bundle \(/usr/bin/ruby3.1\)}, error.message)
    end

    it "runs a gem executable through the launcher with the variant's interpreter, options and Bundler" do
      dir = File.join(@tmp, "bundler-2.4.22")
      FileUtils.mkdir_p([File.join(dir, "exe"), File.join(dir, "lib")])
      ruby = install(bundler_bin: File.join(dir, "exe/bundle"))
      env = bundle_env(ruby)

      assert_equal ["/usr/bin/ruby3.1", "--yjit", "-I", File.join(dir, "lib"), BundleEnv::LAUNCHER],
                   env.exec_prefix(variant(ruby, options: ["--yjit"]).command)
      assert File.file?(BundleEnv::LAUNCHER)
      # Bundler in the standard library (Debian's JRuby): nothing to add.
      assert_equal ["/usr/bin/ruby3.1", BundleEnv::LAUNCHER], bundle_env.exec_prefix
    end

    it "uses a Bundler installed into the gem directory when the ruby has none" do
      env = bundle_env(install(bundler_bin: nil))
      error = assert_raises(Rackbench::SetupError) { env.exec_prefix }
      assert_match(/no Bundler for ruby/, error.message)

      %w[2.4.9 2.4.22].each { |v| FileUtils.mkdir_p(File.join(env.gem_dir, "gems/bundler-#{v}/exe")) }
      %w[2.4.9 2.4.22].each { |v| File.write(File.join(env.gem_dir, "gems/bundler-#{v}/exe/bundle"), "") }
      assert_equal File.join(env.gem_dir, "gems/bundler-2.4.22/exe/bundle"), env.bundler_bin
    end
  end

  describe "Rackbench::BundleEnv::Gemfile" do
    Gemfile = Rackbench::BundleEnv::Gemfile

    it "evaluates the app's Gemfile and adds each server gem unless the app already declares it" do
      text = Gemfile.render(app_gemfile: "/apps/my \"app\"/Gemfile", extra: ['gem "puma", ">= 6"', "gem('nio4r')",
                                                                              "plugin 'x'"])

      assert_includes text, 'eval_gemfile "/apps/my \"app\"/Gemfile"'
      assert_includes text, "declared = dependencies.find { |dep| dep.name == \"puma\" }\nif declared.nil?\n  " \
                            "gem \"puma\", \">= 6\"\nelsif !declared.groups.include?(:default)\n  " \
                            "dependencies.delete(declared)\n  gem \"puma\", *declared.requirement.as_list\nend"
      assert_includes text, "declared = dependencies.find { |dep| dep.name == \"nio4r\" }\nif declared.nil?\n  gem('nio4r')\n"
      assert_includes text, "\nplugin 'x'\n"
      refute_includes text, "source"
    end

    it "pins a gem after everything else, replacing the app's and the servers' declarations of it" do
      text = Gemfile.render(app_gemfile: "/app/Gemfile", extra: ['gem "puma"'],
                            pins: { "rails" => ["~> 7.2.0"], "rack" => [">= 3", "< 3.2"] })

      assert_operator text.index("gem \"puma\""), :<, text.index("rails")
      assert_includes text, "dependencies.delete_if { |dep| dep.name == \"rails\" }\ngem \"rails\", \"~> 7.2.0\"\n"
      assert_includes text, "dependencies.delete_if { |dep| dep.name == \"rack\" }\ngem \"rack\", \">= 3\", \"< 3.2\"\n"
      refute_includes Gemfile.render(app_gemfile: "/app/Gemfile", extra: []), "delete_if"
    end

    it "declares a source only for an app without a Gemfile" do
      assert_includes Gemfile.render(app_gemfile: nil, extra: []), 'source "https://rubygems.org"'
    end

    it "seeds a lockfile from the app's without its BUNDLED WITH" do
      lock = "GEM\n  specs:\n    rack (3.0.8)\n\nDEPENDENCIES\n  rack\n\nBUNDLED WITH\n   2.5.3\n"

      assert_equal "GEM\n  specs:\n    rack (3.0.8)\n\nDEPENDENCIES\n  rack\n", Gemfile.seed_lock(lock)
    end
  end

  describe "Rackbench::BundleEnv::Lockfile" do
    LOCK = <<~LOCK
      GIT
        remote: https://github.com/x/y.git
        revision: abc
        specs:
          y (0.1.0)

      PATH
        remote: ../probe
        specs:
          probe (1.0.0)
            rack (>= 2)

      GEM
        remote: https://rubygems.org/
        specs:
          nio4r (2.7.5-java)
          puma (6.6.1-java)
            nio4r (~> 2.0)
          rack (3.0.8)
          nokogiri (1.16.0-x86_64-linux)
          nokogiri (1.16.0-java)

      PLATFORMS
        universal-java-17
        x86_64-linux

      DEPENDENCIES
        probe!
        puma (>= 6)

      CHECKSUMS
        rack (3.0.8) sha256=abc

      BUNDLED WITH
         2.4.22
    LOCK

    it "reads every locked gem's version without platform, and the Bundler version" do
      expected = { "bundler" => "2.4.22", "nio4r" => "2.7.5", "nokogiri" => "1.16.0", "probe" => "1.0.0",
                   "puma" => "6.6.1", "rack" => "3.0.8", "y" => "0.1.0" }

      assert_equal expected, Rackbench::BundleEnv::Lockfile.gem_versions(LOCK)
      assert_equal expected.keys, Rackbench::BundleEnv::Lockfile.gem_versions(LOCK).keys
    end

    it "finds the gems that depend on given ones, and drops them from a lockfile" do
      lockfile = Rackbench::BundleEnv::Lockfile
      assert_equal({ "nio4r" => [], "nokogiri" => [], "probe" => ["rack"], "puma" => ["nio4r"], "rack" => [],
                     "y" => [] }, lockfile.dependencies(LOCK).transform_values(&:uniq).sort.to_h)
      assert_equal %w[rack probe], lockfile.dependents(LOCK, %w[rack])
      assert_equal %w[nio4r puma], lockfile.dependents(LOCK, %w[nio4r])

      text = lockfile.without(LOCK, %w[rack probe puma])
      assert_equal %w[bundler nio4r nokogiri y], lockfile.gem_versions(text).keys
      refute_includes text, "probe!"
      refute_includes text, "puma (>= 6)"
      assert_includes text, "    nio4r (2.7.5-java)\n"
      assert_includes text, "PLATFORMS\n  universal-java-17\n"
      assert_includes text, "  rack (3.0.8) sha256=abc", "only spec sections lose their entries"
    end

    it "prefers a locked bundler gem over BUNDLED WITH" do
      lock = "GEM\n  specs:\n    bundler (2.3.0)\n\nBUNDLED WITH\n   2.4.22\n"

      assert_equal({ "bundler" => "2.3.0" }, Rackbench::BundleEnv::Lockfile.gem_versions(lock))
    end
  end

  describe "Rackbench::BundleEnv::Failure" do
    it "picks the line that explains the failure, not Bundler's trailing context" do
      output = "Fetching gem metadata\nCould not find gem 'nope' in rubygems repository.\n\nIn Gemfile:\n  nope\n"

      assert_equal "Could not find gem 'nope' in rubygems repository.", Rackbench::BundleEnv::Failure.reason(output)
      assert_equal "Your Ruby version is 3.1.2, but your Gemfile specified 3.3.0",
                   Rackbench::BundleEnv::Failure.reason("Your Ruby version is 3.1.2, but your Gemfile specified 3.3.0\n")
      assert_equal "no output", Rackbench::BundleEnv::Failure.reason("\n== header\n")
    end

    # Bundler's and RubyGems' own words, as they print them.
    it "names the gem and version that does not install on this ruby, and why" do
      required = <<~OUT
        Fetching nokogiri 1.15.0 (x86_64-linux)
        Gem::RuntimeRequirementNotMetError: nokogiri requires Ruby version < 3.3.dev, >= 2.7. The current ruby version is 3.4.5.0.
        An error occurred while installing nokogiri (1.15.0), and Bundler cannot continue.

        In Gemfile:
          rails was resolved to 7.1.0, which depends on
            actionpack was resolved to 7.1.0, which depends on
              nokogiri
      OUT
      assert_equal "nokogiri 1.15.0 does not install: Gem::RuntimeRequirementNotMetError: nokogiri requires Ruby " \
                   "version < 3.3.dev, >= 2.7. The current ruby version is 3.4.5.0.",
                   Rackbench::BundleEnv::Failure.reason(required)
      native = <<~OUT
        Installing commonmarker 0.23.10 with native extensions
        Gem::Ext::BuildError: ERROR: Failed to build gem native extension.
        compiling arena.c
        arena.c:12:5: error: implicit declaration of function 'rb_cData'
        make: *** [Makefile:248: arena.o] Error 1
        An error occurred while installing commonmarker (0.23.10), and Bundler cannot continue.
      OUT
      assert_equal "commonmarker 0.23.10 does not install: arena.c:12:5: error: implicit declaration of function 'rb_cData'",
                   Rackbench::BundleEnv::Failure.reason(native)
    end

    it "joins Bundler's explanation of a resolution that failed into one line" do
      output = <<~OUT
        Resolving dependencies...
        Could not find compatible versions

        Because every version of redmine-thing depends on Ruby < 3.4
          and Gemfile depends on redmine-thing = 1.0,
          Ruby < 3.4 is required.
        So, because current Ruby version is = 3.4.5,
          version solving has failed.
      OUT
      assert_equal "Because every version of redmine-thing depends on Ruby < 3.4 and Gemfile depends on redmine-thing " \
                   "= 1.0, Ruby < 3.4 is required. So, because current Ruby version is = 3.4.5, version solving has failed.",
                   Rackbench::BundleEnv::Failure.reason(output)
    end
  end

  describe "Rackbench::BundleEnv#ensure_installed!" do
    include Helpers

    it "installs once with the bundle's variables and no leaks, then reuses the bundle" do
      env = fake_env(parent_env: { "RUBYOPT" => "-rbundler/setup", "GEM_HOME" => "/x",
                                   "BUNDLE_MIRROR__RUBYGEMS__ORG" => "https://mirror.example" })
      notices = []

      assert_equal :installed, env.ensure_installed!(before_install: ->(e) { notices << e.dir })

      assert_equal [env.dir], notices
      assert_equal 1, calls.size
      assert_equal "install bundle=#{@tmp}/bundler/exe/bundle gemfile=#{env.gemfile_path} path=#{env.install_path} " \
                   "config=#{env.app_config_dir} frozen=false rubyopt=unset gem_home=unset " \
                   "mirror=https://mirror.example cwd=#{env.dir}", calls.first
      assert_includes File.read(env.gemfile_path), "eval_gemfile #{File.join(@app, "Gemfile").inspect}"
      assert_equal({ "bundler" => "9.9.9", "rack" => "3.0.8" }, env.gem_versions)
      log = File.read(env.log_path)
      assert_match(/^== \S+ #{Regexp.escape(@tmp)}\/ruby .*bundle install$/, log)
      assert_includes log, "Bundle complete!"
      assert_equal :reused, env.ensure_installed!, "the same object does not check again"
      assert_equal 1, calls.size

      again = fake_env
      assert_equal :reused, again.ensure_installed!(before_install: ->(e) { notices << e })
      assert_equal %w[install check], calls.map { |c| c.split.first }
      assert_equal 1, notices.size
    end

    it "says who holds the install lock while it waits, instead of looking hung, and writes its own pid when it has it" do
      env = fake_env
      FileUtils.mkdir_p(File.dirname(env.lock_path))
      File.write(env.lock_path, "4242\n1795000000\n/results/logs/bundle-other.log\n")
      holder = File.open(env.lock_path, File::RDWR)
      holder.flock(File::LOCK_EX) # another run installing (flock: a second open file description contends)
      waits = Queue.new
      log = File.join(@tmp, "mine.log")
      installer = Thread.new do
        env.ensure_installed!(log: log, waiting: ->(who, waited_s) { waits << [who, waited_s] })
      end

      who, _waited_s = waits.pop
      assert_equal 4242, who.pid
      assert_equal Time.at(1_795_000_000), who.since
      assert_equal "/results/logs/bundle-other.log", who.log
      assert installer.alive?, "it waits for the lock"
      assert_empty calls, "nothing installs while another process holds the lock"
      holder.flock(File::LOCK_UN)
      assert_equal :installed, installer.value
      assert_equal 1, calls.size
      pid, since, written_log = File.read(env.lock_path).lines.map(&:chomp)
      assert_equal [Process.pid.to_s, log], [pid, written_log]
      assert_in_delta Time.now.to_i, since.to_i, 60
    ensure
      holder&.close
    end

    it "reads a lock file an older rackbench wrote (the pid only)" do
      holder = Rackbench::HolderLock::Holder.parse("4242\n")
      assert_equal [4242, nil, nil], [holder.pid, holder.since, holder.log]
      assert_equal [nil, nil, nil], Rackbench::HolderLock::Holder.parse("").to_a
    end

    it "feeds Bundler's output to a progress while it installs, and ends it with the outcome" do
      env = fake_env
      out = StringIO.new
      progress = BundleEnv::Progress.new(out: out, label: "app", interval_s: 1000)
      env.ensure_installed!(progress: progress)
      assert_match(/\Aapp: 2 gems ready in \d+ s \(1 installed, 1 already there\)\n\z/, out.string)

      failing = fake_env("FAKE_FAIL" => "1")
      FileUtils.rm_f(failing.lockfile_path)
      out = StringIO.new
      assert_raises(Rackbench::SetupError) do
        failing.ensure_installed!(progress: BundleEnv::Progress.new(out: out, label: "app", interval_s: 1000))
      end
      assert_match(/\Aapp: install failed after \d+ s, at gem 0\n\z/, out.string)
    end

    it "raises SetupError with Bundler's meaningful line and the log's path when the install fails" do
      env = fake_env("FAKE_FAIL" => "1")

      error = assert_raises(Rackbench::SetupError) { env.ensure_installed!(log: File.join(@tmp, "logs/b.log")) }

      assert_equal "bundle install failed for hello app on ruby: Could not find gem 'nope' in rubygems repository " \
                   "https://rubygems.org/ or installed locally. (log: #{@tmp}/logs/b.log)", error.message
      assert_includes File.read(File.join(@tmp, "logs/b.log")), "In Gemfile:"
      assert_raises(Rackbench::SetupError) { env.gem_versions }
    end

    it "installs Bundler into the gem directory first for a ruby without one" do
      env = fake_env(bundler_bin: nil)

      assert_equal :installed, env.ensure_installed!

      bundle = File.join(env.gem_dir, "gems/bundler-9.9.9/exe/bundle")
      assert_equal ["gem-install install dir=#{env.gem_dir} gem=bundler", "install bundle=#{bundle}"],
                   calls.map { |c| c[/\A.*?bundle(r|=\S+)/] }
      assert_equal [env.install.path, BundleEnv::LAUNCHER], env.exec_prefix
    end

    it "starts from the app's own Gemfile.lock so its locked versions are kept" do
      File.write(File.join(@app, "Gemfile.lock"), "GEM\n  specs:\n    rack (2.2.8)\n\nBUNDLED WITH\n   2.5.0\n")
      env = fake_env

      env.ensure_installed!

      assert_equal({ "rack" => "2.2.8" }, env.gem_versions)
    end

    it "seeds a new environment of an app without a lockfile from another environment of its gem directory" do
      first = fake_env
      first.ensure_installed!
      File.write(first.lockfile_path, File.read(first.lockfile_path).sub("rack (3.0.8)", "rack (2.2.8)"))
      ruby = File.join(@tmp, "ruby")
      parent = { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls }

      unicorn = bundle_env(install(path: ruby, bundler_bin: File.join(@tmp, "bundler/exe/bundle")),
                           extra: ['gem "unicorn"'], parent_env: parent)
      unicorn.ensure_installed!
      assert_equal "2.2.8", unicorn.gem_versions["rack"], "the sibling's version, not a fresh resolution"

      other_abi = bundle_env(install(path: ruby, version: "3.2.2", abi: "3.2.0", bundler_bin: File.join(@tmp, "bundler/exe/bundle")),
                             extra: ['gem "unicorn"'], parent_env: parent)
      other_abi.ensure_installed!
      assert_equal "3.0.8", other_abi.gem_versions["rack"], "another gem directory is no sibling"

      other_app = File.join(@tmp, "other app")
      FileUtils.mkdir_p(other_app)
      FileUtils.cp(File.join(@app, "Gemfile"), other_app)
      stranger = bundle_env(install(path: ruby, bundler_bin: File.join(@tmp, "bundler/exe/bundle")), app: other_app,
                                                                                                      parent_env: parent)
      stranger.ensure_installed!
      assert_equal "3.0.8", stranger.gem_versions["rack"], "another app's environment is no sibling"
    end

    it "resolves afresh when a sibling's lockfile cannot satisfy the Gemfile, never when the app's own cannot" do
      fake_env.ensure_installed!
      ruby = File.join(@tmp, "ruby")
      parent = { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls, "FAKE_CONFLICT" => "1" }
      unicorn = bundle_env(install(path: ruby, bundler_bin: File.join(@tmp, "bundler/exe/bundle")),
                           extra: ['gem "unicorn"'], parent_env: parent)

      assert_equal :installed, unicorn.ensure_installed!

      assert_equal %w[install check install install], calls.map { |c| c.split.first }
      log = File.read(unicorn.log_path)
      assert_operator log.index("could not find compatible versions"), :<, log.index(BundleEnv::RESOLVE_AFRESH_NOTE)
      assert_equal "3.0.8", unicorn.gem_versions["rack"]

      File.write(File.join(@app, "Gemfile.lock"), "GEM\n  specs:\n    rack (3.1.0)\n")
      own = bundle_env(install(path: ruby, bundler_bin: File.join(@tmp, "bundler/exe/bundle")),
                       extra: ['gem "unicorn"'], parent_env: parent)
      error = assert_raises(Rackbench::SetupError) { own.ensure_installed! }
      assert_match(/Bundler could not find compatible versions for gem "rack"/, error.message)
      refute_includes File.read(own.log_path), BundleEnv::RESOLVE_AFRESH_NOTE
      assert_equal 1, calls.count { |c| c.start_with?("install ") && c.include?(own.gemfile_path) }
    end

    it "never carries a server's gems, or the gems that depend on them, from a sibling" do
      unicorn = bundle_env(install(path: File.join(@tmp, "ruby"), bundler_bin: File.join(@tmp, "bundler/exe/bundle")),
                           extra: ['gem "unicorn"', 'gem "rack", "< 3"'],
                           parent_env: { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls })
      FileUtils.cp(File.join(FIXTURES, "fake_bundler_ruby"), File.join(@tmp, "ruby"))
      unicorn.ensure_installed!
      File.write(unicorn.lockfile_path, <<~LOCK)
        GEM
          remote: https://rubygems.org/
          specs:
            bcrypt (3.1.20)
            kgio (2.11.4)
            rack (2.2.25)
            rack-session (1.0.2)
              rack (< 3)
            unicorn (6.1.0)
              kgio (~> 2.6)

        DEPENDENCIES
          bcrypt
          rack (< 3)
          unicorn
      LOCK

      puma = fake_env
      puma.ensure_installed!

      assert_equal({ "bcrypt" => "3.1.20", "kgio" => "2.11.4" }, puma.gem_versions,
                   "Rack 2, what depends on it and Unicorn's own stay Unicorn's")
    end

    it "prefers the app's own lockfile over a sibling's" do
      first = fake_env
      first.ensure_installed!
      File.write(File.join(@app, "Gemfile.lock"), "GEM\n  specs:\n    rack (2.0.1)\n")
      relocked = fake_env
      relocked.ensure_installed!
      refute_equal first.dir, relocked.dir
      assert_equal "2.0.1", relocked.gem_versions["rack"]
    end

    it "starts from a seeded lock rather than the app's own or a sibling's, and never resolves it afresh" do
      File.write(File.join(@app, "Gemfile.lock"), "GEM\n  specs:\n    rack (2.0.1)\n")
      ruby = File.join(@tmp, "ruby")
      fake_env.ensure_installed!
      parent = { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls }
      seeded = BundleEnv.new(app_dir: @app, install: install(path: ruby, bundler_bin: File.join(@tmp, "bundler/exe/bundle")),
                             root: @root, parent_env: parent, lock_seed: "GEM\n  specs:\n    rack (2.2.8)\n\nBUNDLED WITH\n   2.3.15\n")
      seeded.ensure_installed!
      assert_equal({ "rack" => "2.2.8" }, seeded.gem_versions, "the seed's versions, minus its BUNDLED WITH")

      conflicting = BundleEnv.new(app_dir: @app, install: seeded.install, root: @root,
                                  parent_env: parent.merge("FAKE_CONFLICT" => "1"), lock_seed: "GEM\n  specs:\n    rack (1.0)\n")
      assert_raises(Rackbench::SetupError) { conflicting.ensure_installed! }
      refute_includes File.read(conflicting.log_path), BundleEnv::RESOLVE_AFRESH_NOTE

      own = BundleEnv.new(app_dir: @app, install: seeded.install, root: @root, parent_env: parent,
                          gemfile_extra: ['gem "webrick"'])
      File.delete(File.join(@app, "Gemfile.lock"))
      File.utime(Time.now + 60, Time.now + 60, seeded.lockfile_path) # the newest lockfile of the app's
      own.ensure_installed!
      assert_equal "2.0.1", own.gem_versions["rack"], "a seeded environment is no sibling: its lock is another ruby's"
    end

    it "takes no sibling whose experiment pinned other gems" do
      first = fake_env
      first.ensure_installed!
      File.write(first.lockfile_path, File.read(first.lockfile_path).sub("rack (3.0.8)", "rack (2.2.8)"))
      ruby_install = install(path: File.join(@tmp, "ruby"), bundler_bin: File.join(@tmp, "bundler/exe/bundle"))
      parent = { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls }
      pinned = BundleEnv.new(app_dir: @app, install: ruby_install, root: @root, parent_env: parent,
                             gemfile_extra: ['gem "unicorn"'], gem_pins: { "rack" => ["~> 3.0"] })
      pinned.ensure_installed!
      assert_equal "3.0.8", pinned.gem_versions["rack"], "resolved afresh, not from the unpinned sibling"
      also_pinned = BundleEnv.new(app_dir: @app, install: ruby_install, root: @root, parent_env: parent,
                                  gemfile_extra: ['gem "webrick"'], gem_pins: { "rack" => ["~> 3.0"] })
      File.write(pinned.lockfile_path, File.read(pinned.lockfile_path).sub("rack (3.0.8)", "rack (3.0.9)"))
      also_pinned.ensure_installed!
      assert_equal "3.0.9", also_pinned.gem_versions["rack"], "a sibling with the same pins"
    end

    it "reports a cache it cannot write, or a ruby it cannot start, in one line" do
      File.write(File.join(@tmp, "file"), "")
      unwritable = BundleEnv.new(app_dir: @app, install: install, root: File.join(@tmp, "file/cache"))
      error = assert_raises(Rackbench::SetupError) { unwritable.ensure_installed! }
      assert_equal "cannot prepare the bundle in #{unwritable.dir}: File exists - #{@tmp}/file", error.message

      gone = bundle_env(install(path: File.join(@tmp, "gone/ruby"), bundler_bin: nil))
      error = assert_raises(Rackbench::SetupError) { gone.ensure_installed! }
      assert_equal "cannot run #{@tmp}/gone/ruby: No such file or directory - #{@tmp}/gone/ruby", error.message
    end
  end
end
