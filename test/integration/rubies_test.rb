# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"
require "rackbench/rubies"
require "support/test_rubies"

# What rackbench execs for a ruby named by path, with real binaries: the
# system ruby, a copy of a ruby built from source relocated under another
# directory (which reports the original build's RbConfig.ruby), a plain
# copy of the system ruby and a wrapper script that execs it
# (test/support/test_rubies.rb).
# Each resolves to the file named, and running its command gives the
# description and process image its Install claims.
describe "Rubies named by path, run for real" do
  # Discovery probes JRuby, which takes seconds: once for the whole file.
  def self.installs
    @installs ||= Rackbench::Rubies.discover
  end

  def installs
    self.class.installs
  end

  # [bin/ruby, libruby] of the relocated copy of the 3.4 build.
  def relocated
    @relocated ||= TestRubies.relocated("3.4")
  end

  def copy = TestRubies.copy_and_wrapper.first
  def wrapper = TestRubies.copy_and_wrapper.last
  def system_ruby = File.realpath(RbConfig.ruby)

  def system_install
    installs.find { |i| i.usable? && i.path == system_ruby } ||
      flunk("the system ruby #{system_ruby} was not discovered: #{installs.inspect}")
  end

  def resolve(path)
    Rackbench::Rubies.resolve({ ruby: path }, installs: installs)
  end

  # [RUBY_DESCRIPTION, real path of /proc/self/exe] of a run of the
  # variant's command, as a server process would start.
  def run_for_real(variant)
    script = 'puts RUBY_DESCRIPTION, File.realpath("/proc/self/exe")'
    result = Rackbench::Rubies::Child.run([*variant.command, "-e", script],
                                          env: Rackbench::Rubies::CleanEnv.clean(ENV), timeout_s: 60)
    assert result.success?, "#{variant.command.first} failed: #{result.output}"
    result.output.lines.map(&:strip)
  end

  def assert_runs_as_claimed(variant)
    assert_equal [variant.install.description, variant.install.exe], run_for_real(variant)
  end

  it "runs the relocated build it names, not the build that reports the same RbConfig.ruby" do
    path, libruby = relocated
    original = TestRubies.install("3.4")
    reported = Rackbench::Rubies::Child.run([path, "-e", "print RbConfig.ruby"], env: {}, timeout_s: 60).output
    assert_equal original.path, File.realpath(reported), "the case under test: RbConfig.ruby names the original build"

    variant = resolve(path)
    install = variant.install
    real = File.realpath(path)

    assert_equal [real, real, libruby], [install.path, install.exe, install.libruby]
    refute_equal original.libruby, install.libruby, "the copy maps its own libruby"
    assert_match(/\Aruby 3\.4\.5/, install.description)
    refute_equal system_install.description, install.description
    assert_equal real, variant.command.first
    assert_runs_as_claimed(variant)
  end

  it "runs a copy of the system ruby as the copy" do
    copy = File.realpath(self.copy)

    variant = resolve(self.copy)
    install = variant.install

    assert_equal [copy, copy, system_install.libruby], [install.path, install.exe, install.libruby]
    assert_equal system_install.description, install.description
    refute_equal system_install.name, install.name
    assert_equal copy, variant.command.first
    assert_runs_as_claimed(variant)
  end

  it "runs a wrapper script as the wrapper, which execs the system ruby" do
    wrapper = File.realpath(self.wrapper)

    variant = Rackbench::Rubies.resolve({ ruby: self.wrapper, options: ["--disable-gems"] }, installs: installs)
    install = variant.install

    assert_equal [wrapper, system_ruby, system_install.libruby], [install.path, install.exe, install.libruby]
    assert_equal system_install.description, install.description
    assert_equal [wrapper, "--disable-gems"], variant.command
    assert_runs_as_claimed(variant)
  end

  it "describes the system ruby by its own binary and libruby, and JRuby by its launcher and the JVM" do
    assert_equal [system_ruby, system_ruby], [system_install.path, system_install.exe]
    assert_match(%r{/libruby-[\d.]+\.so\.[\d.]+\z}, system_install.libruby)

    jruby = installs.find { |i| i.usable? && i.engine == "jruby" } || flunk("no JRuby found (bin/setup --all installs it)")
    assert_equal "java", File.basename(jruby.exe)
    refute_equal jruby.exe, jruby.path
    assert_nil jruby.libruby
  end

  it "lists each ruby given to `rackbench rubies --json` as itself" do
    paths = [relocated.first, copy, wrapper]

    out, err, status = rackbench("rubies", "--json", *paths, stdin_data: "")

    assert status.success?, err
    listed = JSON.parse(out)
    by_path = listed.to_h { |entry| [entry["path"], entry] }
    relocated_entry, copy_entry, wrapper_entry = paths.map do |path|
      by_path.fetch(File.realpath(path)) { flunk("#{path} not listed: #{out}") }
    end
    assert_equal %w[explicit explicit explicit], [relocated_entry, copy_entry, wrapper_entry].map { |entry| entry["source"] }
    assert_equal listed.size, listed.map { |entry| entry["name"] }.uniq.size, "names are unique"
    assert_match(/\Aruby 3\.4\.5/, relocated_entry["description"])
    assert_equal [File.realpath(relocated.first), relocated.last], relocated_entry.values_at("exe", "libruby")
    assert_equal [File.realpath(copy), system_install.description], copy_entry.values_at("exe", "description")
    assert_equal [system_ruby, system_install.description], wrapper_entry.values_at("exe", "description")
    system_entry = by_path.fetch(system_ruby)
    assert_equal [system_ruby, system_install.libruby], system_entry.values_at("exe", "libruby")
  end
end
