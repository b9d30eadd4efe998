# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"

# What every process of a trial loaded (Gem.loaded_specs, as the identity
# agent reports it) against the bundle's lock and the experiment's pins:
# both sides of each, and the gems the record keeps.
describe "the identity check of gems" do
  let(:dir) { Dir.mktmpdir("identity-gems") }
  after { FileUtils.rm_rf(dir) }

  GEMS_LOCKED = { "actionpack" => "7.2.4", "rails" => "7.2.4", "rack" => "3.1.8", "puma" => "6.6.1" }.freeze

  def expectation(gems: GEMS_LOCKED, pins: { "rails" => "~> 7.2.0" }, force_ruby_platform: nil)
    Rackbench::Trial::Identity::Expectation.new(
      label: "ruby", options: [], description: "ruby 3.1.2p20 [x86_64-linux]", exe: "/usr/bin/ruby3.1", jit: nil,
      env: {}, server_gem: nil, server_version: nil, gems: gems, gem_pins: pins, force_ruby_platform: force_ruby_platform
    )
  end

  # A process's report: the bundle's gems, plus default gems the ruby
  # activated before Bundler (not the bundle's: never compared).
  def report(pid, ppid, event, gems: GEMS_LOCKED.merge("did_you_mean" => "1.6.1", "bundler" => "2.3.15"), **more)
    reports = File.join(dir, "identity")
    FileUtils.mkdir_p(reports)
    data = { "pid" => pid, "ppid" => ppid, "event" => event, "description" => "ruby 3.1.2p20 [x86_64-linux]",
             "exe" => "/usr/bin/ruby3.1", "jit" => nil, "env" => {}, "gems" => gems, **more.transform_keys(&:to_s) }
    File.write(File.join(reports, "#{pid}.json"), JSON.generate(data))
  end

  def verify!(expected = expectation)
    Rackbench::Trial::Identity::Finished.new(trial_dir: dir, expectation: expected).verify!
  end

  it "passes processes that load the locked versions and a pinned Rails; keeps the bundle's gems of the main one" do
    report(200, 100, "exec")
    report(201, 200, "fork")
    record = verify!
    assert_equal GEMS_LOCKED.sort.to_h, record["gems"], "the bundle's gems only, not the ruby's default gems"
    assert_equal({ "rails" => "~> 7.2.0" }, record["expected"]["gem_pins"])
    refute record["expected"].key?("gems"), "the lock is stored once, as the trial's gem_versions"
  end

  it "fails a worker that loaded another version than the lock's" do
    report(200, 100, "exec")
    report(201, 200, "fork", gems: GEMS_LOCKED.merge("rack" => "3.2.0"))
    error = assert_raises(Rackbench::IdentityMismatch) { verify! }
    assert_equal "identity check failed: process 201: loads rack 3.2.0, the bundle locks 3.1.8", error.message
  end

  it "fails processes whose Rails does not satisfy the pin, or that do not load it" do
    report(200, 100, "exec", gems: GEMS_LOCKED.merge("rails" => "8.0.1", "actionpack" => "8.0.1"))
    error = assert_raises(Rackbench::IdentityMismatch) { verify!(expectation(gems: nil)) }
    assert_equal "identity check failed: main process 200: loads rails 8.0.1, the trial pins rails ~> 7.2.0", error.message

    report(200, 100, "exec", gems: GEMS_LOCKED.except("rails"))
    error = assert_raises(Rackbench::IdentityMismatch) { verify!(expectation(gems: nil)) }
    assert_equal "identity check failed: main process 200: does not load rails, the trial pins rails ~> 7.2.0",
                 error.message
  end

  it "fails a process that reports no gems when there is a bundle, and checks none without one" do
    report(200, 100, "exec", gems: nil)
    error = assert_raises(Rackbench::IdentityMismatch) { verify!(expectation(pins: {})) }
    assert_match(/main process 200: reported no loaded gems/, error.message)
    record = verify!(expectation(gems: nil, pins: {}))
    assert_nil record["gems"]
  end

  it "records how the bundle's native gems were built, and checks force_ruby_platform both ways" do
    platforms = { "puma" => "ruby", "nokogiri" => "x86_64-linux-gnu", "json" => "ruby" }
    gems = GEMS_LOCKED.merge("nokogiri" => "1.18.10")
    report(200, 100, "exec", gems: gems, gem_platforms: platforms, force_ruby_platform: false)
    report(201, 200, "fork", gems: gems, gem_platforms: platforms, force_ruby_platform: false)
    record = verify!(expectation(gems: GEMS_LOCKED.merge("nokogiri" => "1.18.10"), pins: {}, force_ruby_platform: false))
    assert_equal({ "nokogiri" => "x86_64-linux-gnu", "puma" => "ruby" }, record["gem_platforms"], "the bundle's gems only")
    assert_equal [false, false], [record["force_ruby_platform"], record["expected"]["force_ruby_platform"]]

    forced = expectation(gems: GEMS_LOCKED.merge("nokogiri" => "1.18.10"), pins: {}, force_ruby_platform: true)
    error = assert_raises(Rackbench::IdentityMismatch) { verify!(forced) }
    assert_equal "identity check failed: main process 200: Bundler's force_ruby_platform is false, the bundle sets " \
                 "true (and 3 more)", error.message
    report(200, 100, "exec", gems: gems, gem_platforms: platforms, force_ruby_platform: true)
    report(201, 200, "fork", gems: gems, gem_platforms: platforms, force_ruby_platform: true)
    error = assert_raises(Rackbench::IdentityMismatch) { verify!(forced) }
    assert_equal "identity check failed: main process 200: loads nokogiri 1.18.10 as the x86_64-linux-gnu gem, the " \
                 "bundle sets force_ruby_platform (every native gem compiled from source) (and 1 more)", error.message
    compiled = platforms.merge("nokogiri" => "ruby")
    report(200, 100, "exec", gems: gems, gem_platforms: compiled, force_ruby_platform: true)
    report(201, 200, "fork", gems: gems, gem_platforms: compiled, force_ruby_platform: true)
    record = verify!(forced)
    assert_equal [true, true, "ruby"], [record["force_ruby_platform"], record["expected"]["force_ruby_platform"],
                                        record["gem_platforms"]["nokogiri"]]
  end

  it "is reported by the agent: every gem Gem.loaded_specs holds, with its version" do
    FileUtils.mkdir_p(File.join(dir, "identity"))
    agent = Rackbench::Trial::Identity::AGENT
    version = Gem.loaded_specs["minitest"].version.to_s
    script = "gem 'minitest', '= #{version}'; load #{agent.inspect}"
    _, err, status = Open3.capture3({ "RACKBENCH_TRIAL_DIR" => dir }, RbConfig.ruby, "-e", script)
    assert status.success?, err
    reported = JSON.parse(File.read(Dir[File.join(dir, "identity", "*.json")].first))
    assert_equal version, reported.dig("gems", "minitest")
  end

  it "is reported by the agent: the platform of each native gem, ruby for one compiled from source" do
    FileUtils.mkdir_p(File.join(dir, "identity"))
    agent = Rackbench::Trial::Identity::AGENT
    script = <<~RUBY
      precompiled = Gem::Specification.new { |s| s.name = "native"; s.version = "1.0"; s.platform = "x86_64-darwin" }
      source = Gem::Specification.new { |s| s.name = "compiled"; s.version = "2.0"; s.extensions = ["ext/extconf.rb"] }
      pure = Gem::Specification.new { |s| s.name = "pure"; s.version = "3.0" }
      [precompiled, source, pure].each { |spec| Gem.loaded_specs[spec.name] = spec }
      load #{agent.inspect}
    RUBY
    _, err, status = Open3.capture3({ "RACKBENCH_TRIAL_DIR" => dir }, RbConfig.ruby, "-e", script)
    assert status.success?, err
    reported = JSON.parse(File.read(Dir[File.join(dir, "identity", "*.json")].first))
    assert_equal %w[x86_64-darwin ruby], reported["gem_platforms"].values_at("native", "compiled")
    refute reported["gem_platforms"].key?("pure"), "a pure-Ruby gem is no native gem"
  end
end
