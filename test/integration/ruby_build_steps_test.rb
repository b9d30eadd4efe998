# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "stringio"
require "rbconfig"

# Building a ruby from source (Rubies::Build), on a stand-in source tree
# (test/fixtures/ruby_source): its configure writes a Makefile whose
# install puts a bin/ruby that execs the system ruby. The steps, the
# cache, the logs, the key and the failures are the real code; only the
# compiler's minutes are left out (test/integration/ruby_build_test.rb
# builds Ruby itself).
describe Rackbench::Rubies::Build do
  Build = Rackbench::Rubies::Build
  SOURCE = File.expand_path("../fixtures/ruby_source", __dir__)
  PATCHES = File.expand_path("../fixtures/patches", __dir__)

  before do
    @tmp = Dir.mktmpdir("rackbench-build")
    @cache = Build::Cache.new(File.join(@tmp, "cache"))
    @out = StringIO.new
  end

  after do
    Rackbench::CacheUse.release_all
    FileUtils.rm_rf(@tmp)
  end

  def env
    { "FAKE_RUBY_TARGET" => File.realpath(RbConfig.ruby) }
  end

  def recipe(source: SOURCE, **options)
    Build::Recipe.new(name: "fake", source: source, env: env.merge(options.delete(:env) || {}), **options)
  end

  def tarball
    path = File.join(@tmp, "ruby-3.9.1.tar.gz")
    system("tar", "-czf", path, "-C", File.dirname(SOURCE), "--transform", "s,^ruby_source,ruby-3.9.1,",
           File.basename(SOURCE), exception: true)
    path
  end

  def build(recipe)
    Build.install(recipe, out: @out, cache: @cache)
  end

  describe "Recipe" do
    it "keys a build by what it is made of, not by where the source lies" do
      moved = File.join(@tmp, "elsewhere.tar.gz")
      FileUtils.cp(tarball, moved)

      assert_equal recipe(source: tarball).key, recipe(source: moved).key
      assert_match(/\A\h{16}\z/, recipe(source: tarball).key)
    end

    it "keys another build for a patch, a configure argument, a variable or another source content" do
      keys = [recipe, recipe(patches: [File.join(PATCHES, "count-from-one.patch")]),
              recipe(configure: ["--with-jemalloc"]), recipe(env: { "CFLAGS" => "-O3" }),
              recipe(source: tarball)].map(&:key)

      assert_equal keys.uniq, keys
    end

    it "keys a tree by its files, so a file changed in it is another build" do
      tree = File.join(@tmp, "tree")
      FileUtils.cp_r(SOURCE, tree)
      before = recipe(source: tree).key
      File.write(File.join(tree, "array.c"), "long changed = 1;\n")

      refute_equal before, recipe(source: tree).key
    end

    it "resolves a git ref to its commit, keys the build by the commit alone, and a ref that names nothing is an error" do
      repo = File.join(@tmp, "repo")
      FileUtils.cp_r(SOURCE, repo)
      git = ->(*args) { system("git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", *args, out: File::NULL, err: File::NULL) }
      git.call("init", "-q")
      git.call("add", ".")
      git.call("commit", "-qm", "one")
      commit = `git -C #{repo} rev-parse HEAD`.strip

      git_recipe = recipe(source: repo, ref: "HEAD")
      assert_equal({ "kind" => "git", "commit" => commit }, git_recipe.inputs["source"])
      assert_equal "HEAD", git_recipe.to_h["source"]["ref"], "the ref given is kept in the record"
      assert_equal git_recipe.key, recipe(source: repo, ref: commit).key, "a branch and its commit: one build"
      error = assert_raises(Rackbench::ConfigError) { recipe(source: repo, ref: "no-such-branch").key }
      assert_match(/ref no-such-branch names no commit/, error.message)
    end

    it "refuses what cannot be a recipe, naming the ruby and the problem" do
      cases = {
        -> { recipe(source: File.join(@tmp, "missing.tar.xz")) } => /ruby 'fake' build: source .*missing.tar.xz: no such file/,
        -> { recipe(source: File.join(SOURCE, "version.h")) } => /not a tarball/,
        -> { recipe(source: tarball, ref: "v3") } => /a ref needs a git repository/,
        -> { recipe(source: SOURCE, ref: "v3") } => /needs a git repository/,
        -> { recipe(patches: [File.join(@tmp, "none.patch")]) } => /patch .*none.patch: no such file/,
        -> { recipe(configure: ["--prefix=/opt"]) } => /--prefix=\/opt is rackbench's/,
        -> { recipe(configure: ["jemalloc"]) } => /must start with -/,
        -> { recipe(env: { "1X" => "y" }) } => /"1X" is not a variable name/
      }
      cases.each do |make, message|
        error = assert_raises(Rackbench::ConfigError) { make.call }
        assert_match message, error.message
      end
    end

    it "writes one line of a stored recipe for What ran" do
      stored = Build::Recipe.stored(recipe(patches: [File.join(PATCHES, "count-from-one.patch")]).to_h)

      text = Build::Recipe.text(stored)
      assert_match(/\Abuilt from ruby_source \(sha256 \h{12}\) \+ count-from-one.patch \(sha256 \h{12}\), /, text)
      assert_match(/configure --enable-shared --disable-install-doc, FAKE_RUBY_TARGET=.*, build \h{16}\z/, text)
      refute stored.key?("prefix"), "where the build lies is not what it is"
    end
  end

  describe "Rubies.resolve_all" do
    it "builds the build: entries first, named after their label, which another entry names for a variant" do
      cache_was = ENV["RACKBENCH_CACHE"]
      ENV["RACKBENCH_CACHE"] = File.join(@tmp, "root")
      system_install = Rackbench::Rubies::Install.new(name: "ruby", path: RbConfig.ruby, source: :path, engine: "ruby",
                                                      version: RUBY_VERSION, description: RUBY_DESCRIPTION, jit: ["yjit"])
      specs = [{ name: "ruby", ruby: "ruby" }, { name: "fake", ruby: "fake", build: recipe },
               { name: "fake-yjit", ruby: "fake", options: ["--yjit"] }]

      variants = Rackbench::Rubies.resolve_all(specs, installs: [system_install], out: @out)

      assert_equal %w[ruby fake fake-yjit], variants.keys
      assert_equal [:build, :build], [variants["fake"].install.source, variants["fake-yjit"].install.source]
      assert_equal variants["fake"].install.path, variants["fake-yjit"].command.first
      assert_equal ["--yjit"], variants["fake-yjit"].options
      assert_equal recipe.key, variants["fake"].install.recipe["key"]
      clash = Build::Recipe.new(name: "ruby", source: SOURCE, env: env)
      error = assert_raises(Rackbench::ConfigError) do
        Rackbench::Rubies.resolve_all([{ name: "ruby", ruby: "ruby", build: clash }], installs: [system_install], out: @out)
      end
      assert_match(/ruby 'ruby' is built from source, but an installed ruby has that name .*give the build another name/,
                   error.message)
    ensure
      ENV["RACKBENCH_CACHE"] = cache_was
    end
  end

  describe "building" do
    it "runs every step with its own log, records the recipe and describes the built ruby" do
      install = build(recipe(patches: [File.join(PATCHES, "count-from-one.patch")], configure: ["--with-x"]))

      key = install.recipe["key"]
      assert_equal [@cache.ruby_path(key), :build, "fake"], [install.path, install.source, install.name]
      assert_equal RUBY_DESCRIPTION, install.description
      assert_equal "3.9.1", install.recipe["version"]
      assert_equal %w[unpack patch bundled\ gems configure make install check], install.recipe["steps_s"].keys
      logs = Dir[File.join(@cache.log_dir(key), "*.log")].map { |f| File.basename(f) }.sort
      assert_equal %w[01-unpack.log 02-patch.log 03-bundled-gems.log 04-configure.log 05-make.log 06-install.log
                      07-check.log], logs
      assert_includes File.read(File.join(@cache.log_dir(key), "05-make.log")), "compiling hash.c"
      recorded = JSON.parse(File.read(File.join(@cache.prefix(key), Build::Cache::INSTALL_RECORD)))
      assert_equal key, recorded["key"]
      lines = @out.string.lines.map(&:strip)
      assert_match(/\ABuilding ruby 'fake' from ruby_source \+ count-from-one.patch, --with-x \(logs: /, lines.first)
      assert_equal "[1/7] unpack", lines[1]
      assert_match(%r{\Abuilt ruby 3.9.1 in .*: #{Regexp.escape(@cache.ruby_path(key))}\z}, lines.last)
    end

    it "builds in a copy, never in the user's tree, and the patch reaches the build only" do
      build(recipe(patches: [File.join(PATCHES, "count-from-one.patch")]))

      assert_includes File.read(File.join(SOURCE, "array.c")), "= 0;"
      refute File.exist?(File.join(SOURCE, "Makefile"))
      assert_empty Dir[File.join(@cache.root, "work", "*")], "the work directory is removed"
    end

    it "reuses a cached build at once, and says so" do
      first = build(recipe(source: tarball))
      @out.truncate(0)
      @out.rewind

      again = build(recipe(source: tarball))

      assert_equal first.path, again.path
      refute_match(/Building/, @out.string)
      assert_match(/the build #{first.recipe["key"]} of 3.9.1 from the cache/, @out.string)
    end

    it "builds a git commit once, whichever ref names it, and describes it by the ref each asked for" do
      repo = File.join(@tmp, "repo")
      FileUtils.cp_r(SOURCE, repo)
      system("git", "-C", repo, "init", "-q", "-b", "master", exception: true)
      system("git", "-C", repo, "add", ".", exception: true)
      system("git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", exception: true)
      commit = `git -C #{repo} rev-parse HEAD`.strip

      nightly = build(recipe(source: repo, ref: "master"))
      @out.truncate(0)
      @out.rewind
      bisect = build(recipe(source: repo, ref: commit))

      assert_equal nightly.path, bisect.path
      assert_match(/from the cache/, @out.string)
      assert_equal [%w[master], [commit]], [nightly, bisect].map { |i| [i.recipe["source"]["ref"]] }
      assert_equal [commit, commit], [nightly, bisect].map { |i| i.recipe["source"]["commit"] }
    end

    it "fails on a patch that does not apply, in one line naming the patch and the file, before configure" do
      error = assert_raises(Rackbench::BuildError) { build(recipe(patches: [File.join(PATCHES, "not-applying.patch")])) }

      assert_match(/\Aruby 'fake' build: patch not-applying.patch does not apply to array.c \(Hunk #1 FAILED at 1\) \(log: .*02-patch.log\)\z/,
                   error.message)
      refute_includes error.message, "\n"
      assert_empty Dir[File.join(@cache.root, "\h" * 16)], "no cached build"
      refute_match(/\[\d\/\d\] configure/, @out.string)
    end

    it "fails on a source that is not Ruby, in one line" do
      other = File.join(@tmp, "not-ruby")
      FileUtils.mkdir_p(other)
      File.write(File.join(other, "README"), "not ruby\n")

      error = assert_raises(Rackbench::BuildError) { build(recipe(source: other)) }
      assert_equal "ruby 'fake' build: source #{other} is not a Ruby source tree (no Ruby version in " \
                   "include/ruby/version.h and version.h)", error.message
    end

    it "names the Debian package of a missing library before configure runs" do
      hidden = File.join(@tmp, "hide")
      FileUtils.mkdir_p(hidden)
      File.write(File.join(hidden, "yaml.h"), "#error hidden by the test\n")

      error = assert_raises(Rackbench::BuildError) { build(recipe(env: { "CPPFLAGS" => "-I#{hidden}" })) }

      assert_equal "ruby 'fake' build: yaml.h not found (psych (YAML: Bundler, Rails and RubyGems load it) needs it): " \
                   "install the Debian package libyaml-dev (apt-get install libyaml-dev)", error.message
      refute_match(/configure/, @out.string)
    end

    it "fails a step with its log named and the line that says why, and leaves no build behind" do
      error = assert_raises(Rackbench::BuildError) { build(recipe(env: { "FAKE_CONFIGURE_FAIL" => "1" })) }

      assert_match(/\Aruby 'fake' build: configure failed \(exit status 1\) \(log: .*03-configure.log\): configure: error: no acceptable C compiler found in \$PATH\z/,
                   error.message)
      key = recipe(env: { "FAKE_CONFIGURE_FAIL" => "1" }).key
      refute @cache.complete?(key)
      refute File.exist?(@cache.dir(key))
      assert File.file?(File.join(@cache.log_dir(key), "03-configure.log")), "the log is kept"
    end

    it "estimates each step from the last build, with the time left" do
      build(recipe)
      timings = @cache.timings
      assert timings.duration_s("make")
      assert_equal File.foreach(File.join(@cache.log_dir(recipe.key), "04-make.log")).count, timings.lines("make")

      File.write(File.join(@tmp, "t.json"), JSON.generate("make" => { "duration_s" => 300, "lines" => 1000 }))
      progress = Build::Progress.new(out: out = StringIO.new, timings: Build::Timings.new(File.join(@tmp, "t.json")))
      progress.start(ruby: "3.4", summary: "x.tar.xz", steps: %w[make], logs: "/l")
      progress.step(1, "make")
      progress.update(120, 412)
      assert_equal ["Building ruby '3.4' from x.tar.xz, about 5m00s (logs: /l)", "  [1/1] make (about 5m00s)",
                    "  [1/1] make: 412 of about 1000 lines, 2m00s, about 2m51s left"], out.string.lines.map(&:chomp)
    end

    it "waits for another process building the same recipe, naming it, then finds it built" do
      recipe = recipe()
      FileUtils.mkdir_p(@cache.root)
      reader, writer = IO.pipe
      held = IO.pipe
      holder = fork do
        writer.close
        held.first.close
        File.open(@cache.lock_path(recipe.key), File::RDWR | File::CREAT) do |lock|
          Rackbench::HolderLock.acquire(lock, waiting: nil, log: "/var/log/the-other-build")
          held.last.puts "held"
          reader.read # until the test lets go
        end
      end
      reader.close
      held.last.close
      held.first.gets
      out = Queue.new
      log = Object.new
      log.define_singleton_method(:puts) { |line| out << line }
      log.define_singleton_method(:flush) {}
      builder = Thread.new { Build.install(recipe, out: log, cache: @cache) }
      first = out.pop
      assert_match(/\AWaiting for pid #{holder}, which is building ruby 'fake' \(0 s so far; its logs: \/var\/log\/the-other-build\)\z/, first)
      writer.close
      Process.wait(holder)
      assert_equal :build, builder.value.source, "built once the holder let go"
    ensure
      writer&.close unless writer&.closed?
    end

    it "fetches the bundled gems a source lacks, named with their versions" do
      dir = File.join(@tmp, "gems-src")
      FileUtils.cp_r(SOURCE, dir)
      FileUtils.rm(File.join(dir, "gems", "rake-13.2.1.gem"))

      assert_equal [%w[minitest 5.25.4], %w[rake 13.2.1]], Build::BundledGems.listed(dir)
      assert_equal [%w[rake 13.2.1]], Build::BundledGems.missing(dir)
    end
  end
end
