# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "stringio"
require "yaml"

# The run's Bundler environments, installed through a fake ruby that plays
# Bundler (test/fixtures/rubies/fake_bundler_ruby): the app's groups reach
# the environment, one install per (app, groups, ruby, server), progress
# lines on a terminal and elsewhere.
describe Rackbench::Trial::Http::BundleCache do
  BundleCache = Rackbench::Trial::Http::BundleCache
  FakeAdapter = Struct.new(:name) do
    def gem_lines(_engine) = ["gem \"#{name}\""]
  end

  # An output that says it is a terminal.
  class TerminalOut < StringIO
    def tty? = true
  end

  before do
    @tmp = Dir.mktmpdir("rackbench-bundle-cache")
    @app_dir = File.join(@tmp, "app")
    FileUtils.mkdir_p(@app_dir)
    File.write(File.join(@app_dir, "Gemfile"), "source \"https://rubygems.org\"\ngem \"rack\"\n")
    @ruby = File.join(@tmp, "ruby")
    FileUtils.cp(File.expand_path("../fixtures/rubies/fake_bundler_ruby", __dir__), @ruby)
    FileUtils.mkdir_p(File.join(@tmp, "bundler/exe"))
    @calls = File.join(@tmp, "calls")
  end

  let(:install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: @ruby, source: :path, engine: "ruby", version: "3.1.2",
                                   abi_version: "3.1.0", description: "ruby 3.1.2", jit: [],
                                   bundler_bin: File.join(@tmp, "bundler/exe/bundle"))
  end

  def app(builtin: false, bundle_without: nil)
    Rackbench::App.new(name: "mine", dir: @app_dir, builtin: builtin, bundle_without: bundle_without, env: {})
  end

  after { FileUtils.rm_rf(@tmp) }

  def cache(out, parent_env: {})
    parent = { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls }.merge(parent_env)
    BundleCache.new(root: File.join(@tmp, "cache"), out: out, parent_env: parent)
  end

  def config_of(bundle)
    path = File.join(bundle.app_config_dir, "config")
    File.exist?(path) ? YAML.safe_load(File.read(path)) : {}
  end

  it "gives a user's app the default groups, the experiment's when set, and the shell's BUNDLE_WITHOUT" do
    out = StringIO.new
    bundles = cache(out, parent_env: { "BUNDLE_WITHOUT" => "ci" })
    shell = bundles.fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    assert_equal({ "BUNDLE_WITHOUT" => "ci" }, config_of(shell))
    everything = bundles.fetch(app(bundle_without: []), install, FakeAdapter.new("puma"), log_dir: @tmp)
    assert_empty config_of(everything)
    refute_equal shell.dir, everything.dir

    default = cache(out).fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    assert_equal({ "BUNDLE_WITHOUT" => "development:test" }, config_of(default))
    assert_empty config_of(cache(out).fetch(app(builtin: true), install, FakeAdapter.new("puma"), log_dir: @tmp))
  end

  it "prepares each installed environment once for an adapter that asks (Passenger's agent), for no other" do
    preparing = Class.new(FakeAdapter) do
      attr_reader :prepared

      def prepare_bundle(bundle, out:, log:, tty:, extra_env:)
        (@prepared ||= []) << [bundle, log, tty, extra_env]
        out.puts "prepared #{name}"
        :compiled
      end
    end.new("passenger")
    out = StringIO.new
    bundles = cache(out)
    bundle = bundles.fetch(app, install, preparing, log_dir: @tmp)
    assert_same bundle, bundles.fetch(app, install, preparing, log_dir: @tmp)
    assert_equal [[bundle, File.join(@tmp, "bundle-mine-ruby-passenger.log"), false, {}]], preparing.prepared
    assert_includes out.string, "prepared passenger"
    plain = StringIO.new
    cache(plain).fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    refute_includes plain.string, "prepared"
  end

  it "installs once per app, groups, ruby and server" do
    bundles = cache(StringIO.new)
    first = bundles.fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    assert_same first, bundles.fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    refute_same first, bundles.fetch(app, install, FakeAdapter.new("unicorn"), log_dir: @tmp)
    refute_same first, bundles.fetch(app(bundle_without: %w[test]), install, FakeAdapter.new("puma"), log_dir: @tmp)
    # (A `check` before the later installs: they start from the first one's lockfile.)
    assert_equal 3, File.readlines(@calls).count { |line| line.start_with?("install ") }
  end

  it "adds a profiled experiment's profiler to every environment's Gemfile, and nothing otherwise" do
    profiled = BundleCache.new(root: File.join(@tmp, "cache"), out: StringIO.new,
                               parent_env: { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls },
                               extra_gem_lines: Rackbench::Profile::Settings.new(tool: "stackprof").gem_lines)
    with = profiled.fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    without = cache(StringIO.new).fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    assert_match(/^  gem "stackprof", ">= 0.2.16", require: false$/, File.read(with.gemfile_path))
    assert_match(/^declared = dependencies.find \{ \|dep\| dep.name == "stackprof" \}\nif declared.nil\?$/,
                 File.read(with.gemfile_path),
                 "an app's own stackprof line wins")
    refute_includes File.read(without.gemfile_path), "stackprof"
    refute_equal with.dir, without.dir, "an environment of its own"
  end

  it "prints line by line where the output is no terminal, or under CI" do
    [[StringIO.new, {}], [TerminalOut.new, { "CI" => "true" }]].each do |out, parent_env|
      cache(out, parent_env: parent_env).fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
      lines = out.string.lines.map(&:chomp)
      assert_match(/\AInstalling gems for mine \+ puma on ruby \(log: .*bundle-mine-ruby-puma\.log\)\z/, lines.first)
      assert_match(/\A  mine \+ puma on ruby: 2 gems ready in \d+ s \(1 installed, 1 already there\)\z/, lines.last)
      refute_includes out.string, "\r"
      FileUtils.rm_rf(File.join(@tmp, "cache"))
    end
  end

  it "redraws the progress line in place on a terminal" do
    out = TerminalOut.new
    cache(out).fetch(app, install, FakeAdapter.new("puma"), log_dir: @tmp)
    assert_match(/\n\r  mine \+ puma on ruby: 2 gems ready in \d+ s \(1 installed, 1 already there\)\e\[K\n\z/, out.string)
  end
end
