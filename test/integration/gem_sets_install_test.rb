# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "stringio"
require_relative "../fixtures/fakes"

# One gem set per app and server: which ruby resolves it, the order
# environments are made in, the seeded install that must keep the set's
# versions (through the fake ruby that plays Bundler), and the runner
# preparing every environment before the first trial.
describe Rackbench::Trial::Http::GemSets do
  GemSets = Rackbench::Trial::Http::GemSets

  def install(name, version, engine: "ruby", path: "/rubies/#{name}/bin/ruby")
    Rackbench::Rubies::Install.new(name: name, path: path, source: :path, engine: engine, version: version, ruby_version: version,
                abi_version: "#{version[/\A\d+\.\d+/]}.0", description: "#{engine} #{version}", jit: [])
  end

  def variants(*installs, yjit: nil)
    all = installs.map { |i| Rackbench::Rubies::Variant.new(install: i, name: i.name) }
    all << Rackbench::Rubies::Variant.new(install: yjit, name: "#{yjit.name}-yjit", options: []) if yjit
    all.to_h { |v| [v.name, v] }
  end

  def experiment(rubies, extra = "")
    Rackbench::Experiment.parse(<<~YAML, source: "sets.yml", known_servers: %w[puma unicorn], known_apps: nil)
      name: sets
      rubies: #{rubies}
      servers: [puma, unicorn]
      apps: [rails-hello, rack-hello]
      #{extra}
    YAML
  end

  let(:old) { install("old", "3.1.2") }
  let(:mid) { install("mid", "3.3.8") }
  let(:new) { install("new", "3.4.5") }

  it "resolves each app and server's set on the oldest ruby, whatever the experiment's order" do
    exp = experiment("[new, old, mid]")
    sets = GemSets.new(configs: exp.configurations, variants: variants(new, old, mid))
    exp.configurations.each do |config|
      assert_equal "old", sets.base(config).name, config.to_s
    end
    ordered = sets.order(exp.configurations)
    assert_equal 12, ordered.size, "one environment per app, ruby and server"
    assert_equal %w[old old old old], ordered.first(4).map { |c| c.ruby.label }, "every set's own environment first"
    assert_equal ["rails-hello + puma: one gem set, resolved on old (ruby 3.1.2), installed as is for mid, new"],
                 sets.describe(exp.configurations).grep(/rails-hello \+ puma/)
  end

  it "keeps the whole experiment's sets in a step derived for one ruby (capacity, tune)" do
    exp = experiment("[new, old]")
    only_new = exp.configurations.find { |c| c.ruby.label == "new" && c.app.name == "rails-hello" && c.server.name == "puma" }
    step = exp.derive(name: "step", only: only_new, known_servers: %w[puma unicorn], known_apps: nil)
    assert_equal ["new"], step.configurations.map { |c| c.ruby.label }
    sets = GemSets.new(configs: step.gem_set_configurations, variants: variants(new, old))
    assert_equal "old", sets.base(step.configurations.first).name
  end

  it "shares one environment between the variants of one install, and breaks a tie by the experiment's order" do
    twin = install("twin", "3.4.5", path: "/rubies/twin/bin/ruby")
    exp = experiment("[twin, new, { name: new-yjit, ruby: new }]")
    all = { "twin" => Rackbench::Rubies::Variant.new(install: twin, name: "twin"), "new" => Rackbench::Rubies::Variant.new(install: new, name: "new"),
            "new-yjit" => Rackbench::Rubies::Variant.new(install: new, name: "new-yjit") }
    sets = GemSets.new(configs: exp.configurations, variants: all)
    assert(exp.configurations.all? { |c| sets.base(c).name == "twin" })
    assert_equal 8, sets.order(exp.configurations).size, "new and new-yjit share their environments"
  end

  it "gives each pinned requirement and each engine a set of its own, and none with per_ruby" do
    jruby = install("jruby", "9.4.8.0", engine: "jruby")
    exp = experiment("[new, mid, jruby]", "gems: { rails: [\"~> 7.2.0\", \"~> 8.0.0\"] }")
    sets = GemSets.new(configs: exp.configurations, variants: variants(new, mid, jruby))
    bases = exp.configurations.to_h { |c| [[c.ruby.label, c.app.name, c.server.name, c.gems["rails"]], sets.base(c).name] }
    assert_equal "mid", bases[["new", "rails-hello", "puma", "~> 8.0.0"]]
    assert_equal "jruby", bases[["jruby", "rails-hello", "puma", "~> 8.0.0"]], "JRuby's gems are its own"
    per_ruby = GemSets.new(configs: exp.configurations, variants: variants(new, mid, jruby), per_ruby: true)
    assert_nil per_ruby.base(exp.configurations.first)
    assert_equal ["gems resolved by each ruby on its own (gems: per_ruby)"], per_ruby.describe(exp.configurations)
  end
end

describe "Rackbench::Trial::Http::BundleCache with a gem set" do
  # What Ruby 3.1's Bundler 2.3 locks for nokogiri: the source gem and its
  # build tools.
  NATIVE_SOURCE_LOCK = <<~LOCK
    GEM
      remote: https://rubygems.org/
      specs:
        mini_portile2 (2.8.9)
        nokogiri (1.18.10)
          mini_portile2 (~> 2.8.2)
          racc (~> 1.4)
        racc (1.8.1)

    PLATFORMS
      x86_64-linux

    DEPENDENCIES
      nokogiri

    BUNDLED WITH
       2.3.15
  LOCK

  GemSetAdapter = Struct.new(:name) do
    def gem_lines(_engine) = ["gem \"#{name}\""]
  end

  before do
    @tmp = Dir.mktmpdir("rackbench-gem-set")
    @app_dir = File.join(@tmp, "app")
    FileUtils.mkdir_p(@app_dir)
    File.write(File.join(@app_dir, "Gemfile"), "source \"https://rubygems.org\"\ngem \"rack\"\n")
    @calls = File.join(@tmp, "calls")
    %w[old new].each do |name|
      FileUtils.mkdir_p(File.join(@tmp, name, "bundler/exe"))
      FileUtils.cp(File.expand_path("../fixtures/rubies/fake_bundler_ruby", __dir__), File.join(@tmp, name, "ruby"))
    end
  end

  after { FileUtils.rm_rf(@tmp) }

  def install(name, version)
    Rackbench::Rubies::Install.new(name: name, path: File.join(@tmp, name, "ruby"), source: :path, engine: "ruby",
                                   version: version, abi_version: "#{version[/\A\d+\.\d+/]}.0",
                                   description: "ruby #{version}", jit: [],
                                   bundler_bin: File.join(@tmp, name, "bundler/exe/bundle"))
  end

  def cache(out, **env)
    Rackbench::Trial::Http::BundleCache.new(root: File.join(@tmp, "cache"), out: out,
                           parent_env: { "PATH" => "/usr/bin:/bin", "FAKE_CALLS" => @calls, **env })
  end

  let(:app) { Rackbench::App.new(name: "mine", dir: @app_dir, builtin: true, bundle_without: nil, env: {}) }

  it "installs another ruby from the set's lock, with the pins, and names what the ruby adds" do
    out = StringIO.new
    bundles = cache(out)
    pins = { "rack" => ">= 3, < 3.1" }
    set = bundles.fetch(app, install("old", "3.1.2"), GemSetAdapter.new("puma"), log_dir: @tmp, pins: pins)
    File.write(set.lockfile_path, File.read(set.lockfile_path).sub("rack (3.0.8)", "rack (3.0.9)"))

    other = bundles.fetch(app, install("new", "3.4.5"), GemSetAdapter.new("puma"), log_dir: @tmp, pins: pins, set: set)

    assert_equal "3.0.9", other.gem_versions["rack"], "the set's version"
    assert_equal({ "rack" => [">= 3", "< 3.1"] }, other.gem_pins)
    assert_includes File.read(other.gemfile_path), "gem \"rack\", \">= 3\", \"< 3.1\""
    assert_match(/Installing gems for mine \+ puma \(rack >= 3, < 3\.1\) on new \(log: .*bundle-mine-new-puma-rack_3_3\.1\.log\)/,
                 out.string)
    refute_equal set.dir, other.dir
    assert_kind_of Float, bundles.install_s(other)
  end

  it "keeps a set that another ruby installs as a platform gem of the same version, and says so" do
    File.write(File.join(@app_dir, "Gemfile.lock"), NATIVE_SOURCE_LOCK)
    set = cache(StringIO.new).fetch(app, install("old", "3.1.2"), GemSetAdapter.new("puma"), log_dir: @tmp)
    precompiled = File.join(@tmp, "precompiled.lock")
    File.write(precompiled, NATIVE_SOURCE_LOCK.sub("nokogiri (1.18.10)\n      mini_portile2 (~> 2.8.2)\n",
                                                   "nokogiri (1.18.10-x86_64-linux-gnu)\n")
                                              .sub("    mini_portile2 (2.8.9)\n", ""))
    out = StringIO.new
    other = cache(out, "FAKE_LOCK" => precompiled).fetch(app, install("new", "3.4.5"), GemSetAdapter.new("puma"),
                                                         log_dir: @tmp, set: set)
    assert_equal({ "nokogiri" => ["x86_64-linux-gnu"], "racc" => ["ruby"] }, other.gem_platforms)
    assert_includes out.string, "  mine: new (ruby 3.4.5) runs the set's versions as other platforms: nokogiri 1.18.10 " \
                                "x86_64-linux-gnu (the set: source)\n"
    assert_includes out.string, "  mine: new (ruby 3.4.5) leaves out mini_portile2 2.8.9, which the set needs only to " \
                                "compile nokogiri from source\n"
  end

  it "names what an environment resolving on its own changed of the app's lock, and writes force_ruby_platform" do
    File.write(File.join(@app_dir, "Gemfile.lock"), NATIVE_SOURCE_LOCK)
    changed = File.join(@tmp, "changed.lock")
    File.write(changed, NATIVE_SOURCE_LOCK.sub("racc (1.8.1)", "racc (1.8.2)"))
    out = StringIO.new
    bundle = cache(out, "FAKE_LOCK" => changed).fetch(app, install("new", "3.4.5"), GemSetAdapter.new("puma"),
                                                      log_dir: @tmp, force_ruby_platform: true)
    assert_includes out.string, "  mine: new (ruby 3.4.5) changed the app's Gemfile.lock: racc 1.8.2 (locked: 1.8.1)\n"
    assert bundle.force_ruby_platform?
    assert_equal({ "BUNDLE_FORCE_RUBY_PLATFORM" => "true" }, YAML.safe_load(File.read("#{@calls}.config")),
                 "the config Bundler's install read")
    plain = cache(StringIO.new).fetch(app, install("new", "3.4.5"), GemSetAdapter.new("puma"), log_dir: @tmp)
    refute_equal bundle.dir, plain.dir, "another environment"
    refute plain.force_ruby_platform?
  end

  it "stops with the first gem another ruby locks at another version, naming the ruby and the set's" do
    set = cache(StringIO.new).fetch(app, install("old", "3.1.2"), GemSetAdapter.new("puma"), log_dir: @tmp)
    out = StringIO.new
    bundles = cache(out, "FAKE_RELOCK" => "1")
    error = assert_raises(Rackbench::SetupError) do
      bundles.fetch(app, install("new", "3.4.5"), GemSetAdapter.new("puma"), log_dir: @tmp, set: set)
    end
    assert_match(/\Acannot install the gem set of mine \+ puma \(resolved on old \(ruby 3\.1\.2\)\) on new \(ruby 3\.4\.5\): /,
                 error.message)
    assert_match(/: it locks rack 3\.1\.0 where the set has 3\.0\.8; to run one rack on every ruby, pin it to the set's version \(gems: \{ rack: "3\.0\.8" \}\); or let each ruby resolve its own \(gems: per_ruby\) \(log: .*bundle-mine-new-puma\.log\)\z/,
                 error.message)
    again = assert_raises(Rackbench::SetupError) do
      bundles.fetch(app, install("new", "3.4.5"), GemSetAdapter.new("puma"), log_dir: @tmp, set: set)
    end
    assert_equal error.message, again.message, "remembered, not installed again"
  end
end

describe "Rackbench::Runner preparing the gems" do
  let(:dir) { Dir.mktmpdir("rackbench-prepare") }
  let(:out) { StringIO.new }
  let(:launcher) { Fakes::Launcher.new }
  after { FileUtils.rm_rf(dir) }

  def experiment(extra = "")
    Rackbench::Experiment.parse(<<~YAML, source: "prepare.yml", base_dir: dir)
      name: prepare
      batches: 2
      rubies: [ruby, { name: ruby-yjit, ruby: ruby, options: [--yjit] }]
      servers: [puma]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
      #{extra}
    YAML
  end

  def runner(bundles, exp = experiment, resume: false)
    Rackbench::Runner.new(source: exp, results_dir: dir, out: out, err: StringIO.new, installs: [Fakes.install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, resume: resume,
                          parent_env: { "PATH" => "/usr/bin:/bin" }, watchdog: Fakes::Watchdog.new,
                          collaborators: { engine: Fakes::Engine.new, launcher: launcher, bundles: bundles,
                                           companions: Fakes.companions })
  end

  it "installs every environment before the first trial, and says how the gems are resolved" do
    bundles = Fakes::Bundles.new
    runner(bundles).run
    first_boot = out.string.index("1/4")
    assert_operator out.string.index("Gems: rack-hello + puma: one gem set, resolved on ruby"), :<, first_boot
    # The variants share their install: one environment, fetched again by each trial.
    assert_equal({ app: "rack-hello", ruby: "ruby", server: "puma", pins: {}, set: nil, force_ruby_platform: false },
                 bundles.fetched_with.first)
    assert_equal 5, bundles.fetched_with.size, "prepared once, then fetched by each of the 4 trials"
  end

  it "stops before any trial when an environment cannot be installed, and stores none" do
    bundles = Fakes::Bundles.new(error: Rackbench::SetupError.new("cannot install gems for rack-hello + puma on ruby: " \
                                                                  "nokogiri 1.15.0 does not install"))
    error = assert_raises(Rackbench::SetupError) { runner(bundles).run }
    assert_match(/nokogiri 1\.15\.0 does not install/, error.message)
    assert_empty Rackbench::Store.open(dir, &:trials)
    assert_empty launcher.servers, "no server was started"
  end

  it "passes each configuration's pins to its environment" do
    bundles = Fakes::Bundles.new
    runner(bundles, experiment("gems: { rack: [\"~> 2.2\", \"~> 3.1\"] }\nexclude: [{ ruby: ruby-yjit }]")).run
    assert_equal [{ "rack" => "~> 2.2" }, { "rack" => "~> 3.1" }], bundles.fetched_with.map { |f| f[:pins] }.uniq.sort_by(&:to_s)
  end
end
