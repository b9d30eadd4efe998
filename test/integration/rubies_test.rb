# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"
require "rackbench/rubies"
require "support/second_ruby"

# What rackbench execs for a ruby named by path, with real binaries: the
# system ruby, Debian's ruby of another version relocated under a prefix
# (which reports the system's RbConfig.ruby), a plain copy of the system
# ruby and a wrapper script that execs it (test/support/second_ruby.rb).
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

  def second
    SecondRuby.rubies
  end

  def system_install
    installs.find { |i| i.usable? && i.path == second.system } ||
      flunk("the system ruby #{second.system} was not discovered: #{installs.inspect}")
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

  it "runs the relocated build it names, not the system ruby that reports the same RbConfig.ruby" do
    relocated = File.realpath(second.relocated)
    reported = Rackbench::Rubies::Child.run([relocated, "-e", "print RbConfig.ruby"], env: {}, timeout_s: 60).output
    assert_equal second.system, File.realpath(reported), "the case under test: RbConfig.ruby names the system ruby"

    variant = resolve(second.relocated)
    install = variant.install

    assert_equal [relocated, relocated, second.relocated_libruby], [install.path, install.exe, install.libruby]
    assert_match(/\Aruby #{Regexp.escape(second.relocated_version)}p/, install.description)
    refute_equal system_install.description, install.description
    assert_equal relocated, variant.command.first
    assert_runs_as_claimed(variant)
  end

  it "runs a copy of the system ruby as the copy" do
    copy = File.realpath(second.copy)

    variant = resolve(second.copy)
    install = variant.install

    assert_equal [copy, copy, system_install.libruby], [install.path, install.exe, install.libruby]
    assert_equal system_install.description, install.description
    refute_equal system_install.name, install.name
    assert_equal copy, variant.command.first
    assert_runs_as_claimed(variant)
  end

  it "runs a wrapper script as the wrapper, which execs the system ruby" do
    wrapper = File.realpath(second.wrapper)

    variant = Rackbench::Rubies.resolve({ ruby: second.wrapper, options: ["--disable-gems"] }, installs: installs)
    install = variant.install

    assert_equal [wrapper, second.system, system_install.libruby], [install.path, install.exe, install.libruby]
    assert_equal system_install.description, install.description
    assert_equal [wrapper, "--disable-gems"], variant.command
    assert_runs_as_claimed(variant)
  end

  it "describes the system ruby by its own binary and libruby, and JRuby by its launcher and the JVM" do
    assert_equal [second.system, second.system], [system_install.path, system_install.exe]
    assert_match(%r{/libruby-[\d.]+\.so\.[\d.]+\z}, system_install.libruby)

    jruby = installs.find { |i| i.usable? && i.engine == "jruby" } || flunk("no JRuby found (bin/setup installs it)")
    assert_equal "java", File.basename(jruby.exe)
    refute_equal jruby.exe, jruby.path
    assert_nil jruby.libruby
  end

  it "lists each ruby given to `rackbench rubies --json` as itself" do
    paths = [second.relocated, second.copy, second.wrapper]
    exe = File.expand_path("../../exe/rackbench", __dir__)

    out, err, status = Open3.capture3(RbConfig.ruby, exe, "rubies", "--json", *paths, stdin_data: "")

    assert status.success?, err
    listed = JSON.parse(out)
    by_path = listed.to_h { |entry| [entry["path"], entry] }
    relocated, copy, wrapper = paths.map do |path|
      by_path.fetch(File.realpath(path)) { flunk("#{path} not listed: #{out}") }
    end
    assert_equal %w[explicit explicit explicit], [relocated, copy, wrapper].map { |entry| entry["source"] }
    assert_equal listed.size, listed.map { |entry| entry["name"] }.uniq.size, "names are unique"
    assert_match(/\Aruby #{Regexp.escape(second.relocated_version)}p/, relocated["description"])
    assert_equal [File.realpath(second.relocated), second.relocated_libruby], relocated.values_at("exe", "libruby")
    assert_equal [File.realpath(second.copy), system_install.description], copy.values_at("exe", "description")
    assert_equal [second.system, system_install.description], wrapper.values_at("exe", "description")
    system_entry = by_path.fetch(second.system)
    assert_equal [second.system, system_install.libruby], system_entry.values_at("exe", "libruby")
  end
end
