# frozen_string_literal: true

require "digest"
require "fileutils"
require "pathname"
require "rbconfig"
require "stringio"
require "rackbench"
require "rackbench/rubies"

# Rubies the integration tests can always get, whatever Debian ships as
# ruby3.1 this month: upstream Ruby 3.3.8 and 3.4.5, built from source by
# rackbench itself (Rubies::Build) and cached like any user's build, from
# the release tarballs Debian's source packages carry. Each tarball is
# pinned by version and SHA-256; a mirror that no longer has it fails the
# test with a line that says so (never a skip).
#
# Also, for the tests of what rackbench execs, as the old fixture had them:
# - a relocated copy of a built ruby: its install copied under another
#   directory, its RUNPATH pointed at its own libruby (patchelf); it still
#   reports the original's RbConfig.ruby, as relocated and portable builds do;
# - a plain copy of the system ruby's binary under another path;
# - a wrapper script that execs the system ruby.
#
# The downloads go to the cache's sources/ (they are kept with the builds:
# `rackbench cache` lists them); the copies under the worktree's
# tmp/test-rubies/ (gitignored).
module TestRubies
  # The Debian source package that carries each upstream tarball, and the
  # tarball's pinned digest. The mirror may lack a package's .dsc (ruby3.3's
  # answered 404): the tarball alone is relied on.
  SOURCES = {
    "3.3" => { package: "ruby3.3", debian_version: "3.3.8-2.2", suite: "sid", version: "3.3.8",
               file: "ruby3.3_3.3.8.orig.tar.xz",
               sha256: "e2e1233ad275b7623a05edf23a01192626d1da454bdfe353a28a87acd8ef015c" },
    "3.4" => { package: "ruby3.4", debian_version: "3.4.5-1~exp1", suite: "experimental", version: "3.4.5",
               file: "ruby3.4_3.4.5.orig.tar.xz",
               sha256: "141fb3b0192b8196361b3b4d6c29fc9b10c0798dbe54ada1539d9f1c311bfcbf" }
  }.freeze
  # 3.4.5 with a patch that adds a fixed cost to rb_hash_aset (every
  # Hash#[]= and every header a server puts into a Rack env): the patched
  # build the tests tell apart from the stock one. With ccache, built in
  # about a minute after the stock build.
  SLOW_PATCH = File.expand_path("../fixtures/patches/ruby-3.4-slow-hash-aset.patch", __dir__)
  PATCHED = { name: "ruby-3.4.5-slow-hash-aset", patches: [SLOW_PATCH] }.freeze
  COPIES = File.expand_path("../../tmp/test-rubies", __dir__)
  DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
  COMMAND_TIMEOUT_S = 600

  # A test ruby cannot be had; the message says why and what to do.
  class Unavailable < StandardError; end

  module_function

  # The pinned tarball of series ("3.3", "3.4"), downloaded once into the
  # cache's sources/ and checked against its digest. Raises Unavailable.
  def tarball(series)
    source = SOURCES.fetch(series)
    dir = File.join(Rackbench::CacheRoot.path, "sources")
    path = File.join(dir, source[:file])
    FileUtils.mkdir_p(dir)
    File.open(File.join(dir, ".lock"), File::CREAT | File::RDWR) do |lock|
      lock.flock(File::LOCK_EX)
      download(source, dir) unless File.file?(path) && digest(path) == source[:sha256]
    end
    path
  end

  # The recipe of series' build (the same key wherever the tarball lies).
  # :patches :: patch files to build with (default: none)
  def recipe(series, name: "ruby-#{SOURCES.fetch(series)[:version]}", patches: [])
    Rackbench::Rubies::Build::Recipe.new(name: name, source: tarball(series), patches: patches)
  end

  # The Install of series' build: from the cache (quietly), or built first
  # (minutes; progress on out). Raises Unavailable when the tarball cannot
  # be had.
  def install(series, out: $stdout, **recipe_options)
    @installs ||= {}
    @installs[[series, recipe_options]] ||= begin
      recipe = recipe(series, **recipe_options)
      quiet = Rackbench::Rubies::Build::Cache.new.complete?(recipe.key)
      Rackbench::Rubies::Build.install(recipe, out: quiet ? StringIO.new : out)
    end
  end

  # bin/ruby of series' build.
  def ruby(series, **options)
    install(series, **options).path
  end

  # The Install of the patched 3.4 build (PATCHED).
  def patched(out: $stdout)
    install("3.4", out: out, **PATCHED)
  end

  # Builds every series and the patched build (rake test:rubies, before
  # the integration lanes start, so that no test waits minutes for a
  # build): returns how long each took (a cached one: the probe only).
  def prepare!(out: $stdout)
    builds = SOURCES.keys.map { |series| [series, -> { install(series, out: out) }] }
    builds << [PATCHED[:name], -> { patched(out: out) }]
    builds.map do |name, build|
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      build.call
      [name, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started]
    end
  end

  # A copy of series' whole install under COPIES, its binary pointed at
  # its own libruby: [path of bin/ruby, real path of its libruby]. It reports
  # the original build's RbConfig.ruby.
  def relocated(series)
    install = install(series)
    key = install.recipe.fetch("key")
    dir = File.join(COPIES, "relocated-#{key}")
    ruby = File.join(dir, "bin", "ruby")
    locked(File.join(COPIES, ".lock")) do
      next if File.executable?(ruby)

      staging = "#{dir}.staging-#{Process.pid}"
      FileUtils.rm_rf(staging)
      FileUtils.cp_r(File.dirname(File.dirname(install.path)), staging, preserve: true)
      run!("patchelf", "--set-rpath", "$ORIGIN/../lib", File.join(staging, "bin", "ruby"),
           what: "point the relocated copy at its own libruby")
      File.rename(staging, dir)
    end
    [ruby, File.realpath(Dir[File.join(dir, "lib", "libruby.so.*")].min_by(&:size))]
  end

  # [copy, wrapper] of the system ruby (real path of RbConfig.ruby).
  def copy_and_wrapper
    system_ruby = File.realpath(RbConfig.ruby)
    dir = File.join(COPIES, "system-#{Digest::SHA256.file(system_ruby).hexdigest[0, 16]}")
    copy = File.join(dir, "copy", File.basename(system_ruby))
    wrapper = File.join(dir, "wrapper", File.basename(system_ruby))
    locked(File.join(COPIES, ".lock")) do
      next if File.executable?(copy) && File.executable?(wrapper)

      FileUtils.mkdir_p([File.dirname(copy), File.dirname(wrapper)])
      FileUtils.cp(system_ruby, copy, preserve: true)
      File.write(wrapper, "#!/bin/sh\nexec #{system_ruby} \"$@\"\n")
      File.chmod(0o755, wrapper)
    end
    [copy, wrapper]
  end

  # Downloads the source package's files with apt-get into dir, through a
  # private apt configuration (its own sources list naming only the
  # package's suite, its own lists directory): the machine's sources are
  # never read or changed. Only the tarball is kept.
  def download(source, dir)
    apt = File.join(dir, "apt-#{source[:suite]}")
    lists = File.join(apt, "lists")
    FileUtils.mkdir_p(File.join(lists, "partial"))
    list = File.join(apt, "sources.list")
    signed = File.file?(DEBIAN_KEYRING) ? "[signed-by=#{DEBIAN_KEYRING}]" : "[trusted=yes]"
    File.write(list, "deb-src #{signed} #{mirror} #{source[:suite]} main\n")
    options = ["-o", "Dir::Etc::SourceList=#{list}", "-o", "Dir::Etc::SourceParts=/dev/null",
               "-o", "Dir::State::Lists=#{lists}", "-o", "APT::Sandbox::User=root"]
    run!("apt-get", *options, "update", what: "read the #{source[:suite]} source index from #{mirror}")
    work = File.join(apt, "download")
    FileUtils.rm_rf(work)
    FileUtils.mkdir_p(work)
    # apt-get exits 100 when the .dsc is missing even though the tarball
    # arrived: the tarball and its digest decide.
    result = run("apt-get", *options, "source", "--download-only", "#{source[:package]}=#{source[:debian_version]}",
                 chdir: work)
    got = File.join(work, source[:file])
    unless File.file?(got)
      raise Unavailable, "the Debian mirror #{mirror} no longer has #{source[:package]} #{source[:debian_version]} " \
                         "(suite #{source[:suite]}), whose #{source[:file]} is Ruby #{source[:version]} for the tests: " \
                         "update TestRubies::SOURCES (test/support/test_rubies.rb) to a version it has " \
                         "(apt-get said: #{result.output.to_s.lines.grep(/E:/).first.to_s.strip})"
    end
    actual = digest(got)
    unless actual == source[:sha256]
      raise Unavailable, "#{source[:file]} from #{mirror} has sha256 #{actual}, not the pinned #{source[:sha256]}"
    end

    File.rename(got, File.join(dir, source[:file]))
    FileUtils.rm_rf(work)
  end

  # The Debian archive the machine's apt uses (its first URIs line for
  # Debian's main archive), else deb.debian.org.
  def mirror
    @mirror ||= begin
      text = Dir["/etc/apt/sources.list.d/*.sources"].map { |f| File.read(f) }.join("\n")
      text += File.read("/etc/apt/sources.list") if File.file?("/etc/apt/sources.list")
      uris = text.scan(/^URIs:\s*(\S+)/).flatten + text.scan(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)/).flatten
      uris.find { |u| u.match?(%r{/debian/?\z}) } || "http://deb.debian.org/debian"
    rescue SystemCallError
      "http://deb.debian.org/debian"
    end
  end

  def digest(path)
    Digest::SHA256.file(path).hexdigest
  end

  def locked(path)
    FileUtils.mkdir_p(File.dirname(path))
    File.open(path, File::CREAT | File::RDWR) do |lock|
      lock.flock(File::LOCK_EX)
      yield
    end
  end

  def run(*argv, chdir: nil)
    Rackbench::Rubies::Child.run(argv, env: Rackbench::Rubies::CleanEnv.clean(ENV), timeout_s: COMMAND_TIMEOUT_S,
                                       chdir: chdir)
  end

  # Runs argv (no shell, no stdin, bounded); raises Unavailable naming what failed.
  def run!(*argv, what:, chdir: nil)
    result = run(*argv, chdir: chdir)
    return result.output if result.success?

    why = result.timed_out ? "timed out after #{COMMAND_TIMEOUT_S} s" : "failed"
    raise Unavailable, "cannot #{what}: `#{argv.join(" ")}` #{why}: #{result.output.to_s.lines.last(3).join.strip}"
  rescue SystemCallError => e
    raise Unavailable, "cannot #{what}: #{e.message}"
  end
end
