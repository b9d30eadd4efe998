# frozen_string_literal: true

require "fileutils"
require "pathname"
require "rbconfig"
require "tmpdir"
require "rackbench/rubies"

# Other CRuby binaries beside the system's, for the integration tests of
# what rackbench execs (test/integration/rubies_test.rb):
#
# - a relocated build: Debian's ruby (ruby3.1) of a version other than the
#   installed one, downloaded with its libruby (apt-get download), unpacked
#   under a prefix (dpkg -x) and pointed at that libruby (patchelf
#   --set-rpath). It reports the system's RbConfig.ruby (/usr/bin/ruby3.1),
#   as relocated and portable builds do;
# - a plain copy of the system ruby's binary under another path;
# - a wrapper script that execs the system ruby.
#
# Built once and cached under the worktree's tmp/test-rubies/ (gitignored),
# keyed by the Debian versions involved. Needs dpkg, apt-get, patchelf
# (bin/setup installs it) and the Debian mirror. Fails with Unavailable,
# never skips, when the mirror offers no other version.
module SecondRuby
  ROOT = File.expand_path("../../tmp/test-rubies", __dir__)

  # system :: real path of the ruby running the tests
  # system_package, system_version :: its Debian package and version ("ruby3.1", "3.1.2-7+deb12u1")
  # relocated :: the other version's interpreter, under its prefix
  # relocated_version :: its Ruby version ("3.1.7"), as RUBY_DESCRIPTION shows it
  # relocated_package_version :: its Debian version ("3.1.7-1~deb12u2")
  # relocated_libruby :: real path of the libruby it must map
  # copy :: a copy of the system binary
  # wrapper :: a /bin/sh script exec'ing the system binary
  Rubies = Struct.new(:system, :system_package, :system_version, :relocated, :relocated_version,
                      :relocated_package_version, :relocated_libruby, :copy, :wrapper, keyword_init: true)

  # The second ruby cannot be built here; the message says why and what to do.
  class Unavailable < StandardError; end

  # How long one download, unpack or check may take.
  COMMAND_TIMEOUT_S = 300

  module_function

  # The rubies, built on first use (in this process and across processes:
  # later calls find the cache). Raises Unavailable.
  def rubies
    @rubies ||= build
  end

  def build
    system_ruby = File.realpath(RbConfig.ruby)
    package = owning_package(system_ruby)
    installed = installed_version(package)
    other = other_version(package, installed)
    FileUtils.mkdir_p(ROOT)
    # Test processes may start at once; one builds, the others wait for it.
    File.open(File.join(ROOT, ".lock"), File::CREAT | File::RDWR) do |lock|
      lock.flock(File::LOCK_EX)
      relocated_dir = cached(dir_name(package, other)) { |dir| unpack_relocated(dir, package, other, system_ruby) }
      sibling_dir = cached(dir_name(package, installed)) { |dir| copy_and_wrap(dir, system_ruby) }
      name = File.basename(system_ruby)
      Rubies.new(system: system_ruby, system_package: package, system_version: installed,
                 relocated: File.join(relocated_dir, "prefix", system_ruby.delete_prefix("/")),
                 relocated_version: upstream(other), relocated_package_version: other,
                 relocated_libruby: libruby_in(File.join(relocated_dir, "prefix")),
                 copy: File.join(sibling_dir, "copy", name), wrapper: File.join(sibling_dir, "wrapper", name))
    end
  end

  # The Debian package holding path ("ruby3.1" for /usr/bin/ruby3.1).
  def owning_package(path)
    out = run!("dpkg-query", "-S", path, what: "find the Debian package of #{path} (the relocated ruby is Debian's)")
    out.lines.first.split(":").first.strip
  end

  def installed_version(package)
    run!("dpkg-query", "-W", "-f", "${Version}", package, what: "read the installed version of #{package}").strip
  end

  # The newest version of package, other than installed, that the mirror
  # has for both the interpreter and its library package.
  def other_version(package, installed)
    versions = [package, library(package)].map { |name| mirror_versions(name) }
    candidates = (versions.first & versions.last) - [installed]
    return candidates.max { |a, b| compare(a, b) } unless candidates.empty?

    listed = versions.map { |list| list.empty? ? "none" : list.join(", ") }
    raise Unavailable, "the Debian mirror has no #{package} other than the installed #{installed} " \
                       "(apt-cache madison #{package}: #{listed.first}; #{library(package)}: #{listed.last}): " \
                       "run apt-get update, or use a mirror with another #{package} " \
                       "(Debian 12 has 3.1.2 and, in bookworm-security, 3.1.7)"
  end

  # Debian names ruby3.1's shared library package libruby3.1.
  def library(package)
    "lib#{package}"
  end

  def mirror_versions(name)
    out = run!("apt-cache", "madison", name, what: "list the versions of #{name} on the mirror")
    out.lines.map { |line| line.split("|")[1].to_s.strip }.reject(&:empty?).uniq
  end

  def compare(a, b)
    return 0 if a == b

    system("dpkg", "--compare-versions", a, "gt", b, in: File::NULL) ? 1 : -1
  end

  # "3.1.7" from "3.1.7-1~deb12u2" (or "1:3.1.7-1").
  def upstream(debian_version)
    debian_version.sub(/\A\d+:/, "").sub(/-[^-]*\z/, "")
  end

  def dir_name(package, version)
    File.join(ROOT, "#{package}_#{version.tr("~:+", "___")}")
  end

  # dir, made by the block in a staging directory and renamed into place
  # once complete, so an interrupted build is never taken for a cache.
  def cached(dir)
    return dir if File.directory?(dir)

    staging = Dir.mktmpdir("staging-", ROOT)
    yield staging
    File.rename(staging, dir)
    dir
  ensure
    FileUtils.rm_rf(staging) if staging && File.directory?(staging)
  end

  def unpack_relocated(dir, package, version, system_ruby)
    debs = File.join(dir, "debs")
    FileUtils.mkdir_p(debs)
    run!("apt-get", "download", "#{library(package)}=#{version}", "#{package}=#{version}",
         chdir: debs, what: "download #{package} #{version} from the Debian mirror")
    prefix = File.join(dir, "prefix")
    Dir[File.join(debs, "*.deb")].sort.each { |deb| run!("dpkg", "-x", deb, prefix, what: "unpack #{deb}") }
    binary = File.join(prefix, system_ruby.delete_prefix("/"))
    libdir = File.dirname(libruby_in(prefix))
    # $ORIGIN keeps the RUNPATH right when the staging directory is renamed.
    rpath = File.join("$ORIGIN", relative(libdir, File.dirname(binary)))
    run!("patchelf", "--set-rpath", rpath, binary, what: "point #{binary} at its own libruby")
    check_relocated!(binary, libdir, upstream(version))
  end

  # A relocated binary that finds no libruby of its own would run the
  # system's, and be the system ruby under another path: refuse to cache it.
  def check_relocated!(binary, libdir, ruby_version)
    out = run!(binary, "-e", 'puts RUBY_DESCRIPTION, File.read("/proc/self/maps")[%r{/\S*/libruby\S*}]',
               what: "run #{binary}")
    description, mapped = out.lines.map(&:strip)
    return if description.start_with?("ruby #{ruby_version}") && mapped.to_s.start_with?(libdir)

    raise Unavailable, "#{binary} runs as #{description.inspect} with #{mapped.inspect}, " \
                       "not ruby #{ruby_version} with the libruby under #{libdir}"
  end

  def copy_and_wrap(dir, system_ruby)
    copy = File.join(dir, "copy", File.basename(system_ruby))
    FileUtils.mkdir_p(File.dirname(copy))
    FileUtils.cp(system_ruby, copy, preserve: true)
    wrapper = File.join(dir, "wrapper", File.basename(system_ruby))
    FileUtils.mkdir_p(File.dirname(wrapper))
    File.write(wrapper, "#!/bin/sh\nexec #{system_ruby} \"$@\"\n")
    File.chmod(0o755, wrapper)
  end

  def libruby_in(prefix)
    found = Dir[File.join(prefix, "usr/lib/**/libruby-*.so.*")].min_by(&:size)
    raise Unavailable, "no libruby under #{prefix}" unless found

    File.realpath(found)
  end

  def relative(path, from)
    Pathname.new(path).relative_path_from(Pathname.new(from)).to_s
  end

  # Runs argv without a shell or stdin (the tests run with CI=true and no
  # terminal), bounded in time, in the environment a child ruby gets (no
  # RUBYOPT=-rbundler/setup from the test's bundle exec); returns its
  # output, raises Unavailable naming what failed.
  def run!(*argv, what:, chdir: nil)
    result = Rackbench::Rubies::Child.run(argv, env: Rackbench::Rubies::CleanEnv.clean(ENV),
                                                timeout_s: COMMAND_TIMEOUT_S, chdir: chdir)
    return result.output if result.success?

    why = result.timed_out ? "timed out after #{COMMAND_TIMEOUT_S} s" : "failed"
    raise Unavailable, "cannot #{what}: `#{argv.join(" ")}` #{why}: #{result.output.lines.last(3).join.strip}"
  rescue SystemCallError => e
    raise Unavailable, "cannot #{what}: #{e.message}"
  end
end
