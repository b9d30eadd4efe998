# frozen_string_literal: true

require "test_helper"

# What differs between two locks of one app (BundleEnv::LockComparison),
# and the words a run prints or refuses with (Trial::Http::GemSetCheck).
# The locks are those Bundler wrote here: Ruby 3.1's Bundler 2.3.15 locks
# nokogiri 1.18.10 as the source gem with mini_portile2 (it cannot install
# the "-gnu" gem, which needs RubyGems 3.3.22); Ruby 3.3.8's Bundler
# 2.5.22, re-resolving the same lock with puma added, keeps 1.18.10 as the
# precompiled x86_64-linux-gnu gem and drops mini_portile2.
describe "a gem set's locks compared" do
  LockComparison = Rackbench::BundleEnv::LockComparison
  GemSetCheck = Rackbench::Trial::Http::GemSetCheck

  def lock(specs, platforms: ["x86_64-linux"], bundled_with: "2.3.15")
    <<~LOCK
      GEM
        remote: https://rubygems.org/
        specs:
      #{specs.gsub(/^/, "    ").rstrip}

      PLATFORMS
      #{platforms.map { |p| "  #{p}" }.join("\n")}

      DEPENDENCIES
        nokogiri
        puma
        rack

      BUNDLED WITH
         #{bundled_with}
    LOCK
  end

  SOURCE_SPECS = <<~SPECS
    mini_portile2 (2.8.9)
    nio4r (2.7.5)
    nokogiri (1.18.10)
      mini_portile2 (~> 2.8.2)
      racc (~> 1.4)
    puma (8.0.2)
      nio4r (~> 2.0)
    racc (1.8.1)
    rack (3.0.9)
  SPECS
  PRECOMPILED_SPECS = <<~SPECS
    nio4r (2.7.5)
    nokogiri (1.18.10-x86_64-linux-gnu)
      racc (~> 1.4)
    puma (8.0.2)
      nio4r (~> 2.0)
    racc (1.8.1)
    rack (3.0.9)
  SPECS

  let(:set) { lock(SOURCE_SPECS) }
  let(:precompiled) { lock(PRECOMPILED_SPECS, bundled_with: "2.5.22") }

  it "reads the platforms a lock names for each gem, several for a lock of several platforms" do
    both = lock("nokogiri (1.18.10)\n  racc (~> 1.4)\nnokogiri (1.18.10-x86_64-linux-gnu)\n  racc (~> 1.4)\nracc (1.8.1)",
                platforms: %w[ruby x86_64-linux-gnu])
    assert_equal({ "nokogiri" => %w[ruby x86_64-linux-gnu], "racc" => ["ruby"] }, Rackbench::BundleEnv::Lockfile.gem_platforms(both))
    assert_equal({ "nokogiri" => "1.18.10", "racc" => "1.8.1", "bundler" => "2.3.15" },
                 Rackbench::BundleEnv::Lockfile.gem_versions(both))
  end

  it "holds a set whose native gem another ruby locks precompiled at the same version, without its build tools" do
    comparison = LockComparison.new(set, precompiled)
    assert_empty comparison.versions, "Bundler's own version is never compared"
    assert_equal [["nokogiri", "1.18.10", ["ruby"], ["x86_64-linux-gnu"]]],
                 comparison.platforms.map { |c| c.to_a }
    dropped = comparison.only_in_reference
    assert_equal [["mini_portile2", "2.8.9", ["nokogiri"], true]], dropped.map(&:to_a)
    assert_empty comparison.only_in_other
    assert comparison.same_versions?

    check = GemSetCheck.new(comparison, ruby: "r33 (ruby 3.3.8)")
    assert check.holds?
    assert_nil check.refusal
    assert_equal ["r33 (ruby 3.3.8) runs the set's versions as other platforms: nokogiri 1.18.10 x86_64-linux-gnu " \
                  "(the set: source)",
                  "r33 (ruby 3.3.8) leaves out mini_portile2 2.8.9, which the set needs only to compile nokogiri from source"],
                 check.notes
  end

  it "says no platform changed under force_ruby_platform when the other lock names the source gem beside another" do
    both = lock(SOURCE_SPECS.sub("nokogiri (1.18.10)\n", "nokogiri (1.18.10)\n  mini_portile2 (~> 2.8.2)\n  racc (~> 1.4)\nnokogiri (1.18.10-x86_64-linux-gnu)\n"))
    forced = GemSetCheck.new(LockComparison.new(set, both), ruby: "r33", force_ruby_platform: true)
    assert_empty forced.notes
    plain = GemSetCheck.new(LockComparison.new(set, both), ruby: "r33")
    assert_equal ["r33 runs the set's versions as other platforms: nokogiri 1.18.10 source and x86_64-linux-gnu (the set: source)"],
                 plain.notes
  end

  it "says the build tools a ruby adds where the set had the precompiled gem" do
    check = GemSetCheck.new(LockComparison.new(precompiled, set), ruby: "r31")
    assert check.holds?
    assert_equal ["r31 runs the set's versions as other platforms: nokogiri 1.18.10 source (the set: x86_64-linux-gnu)",
                  "r31 adds mini_portile2 2.8.9, which it needs only to compile nokogiri from source"], check.notes
  end

  it "refuses a version that differs, in one line naming the gem, both versions and what to do" do
    other = lock(PRECOMPILED_SPECS.sub("rack (3.0.9)", "rack (3.1.12)").sub("racc (1.8.1)", "racc (1.8.2)"))
    check = GemSetCheck.new(LockComparison.new(set, other), ruby: "r34 (ruby 3.4.5)")
    refute check.holds?
    assert_equal "it locks racc 1.8.2 where the set has 1.8.1 (and 1 more: rack); to run one racc on every ruby, " \
                 "pin it to the set's version (gems: { racc: \"1.8.1\" }); or let each ruby resolve its own " \
                 "(gems: per_ruby)", check.refusal
    refute_includes check.refusal, "\n"
  end

  it "advises locking the ruby's platform when the other version is a platform gem the set's lock lacks" do
    other = lock(PRECOMPILED_SPECS.sub("nokogiri (1.18.10-x86_64-linux-gnu)", "nokogiri (1.19.7-x86_64-linux-gnu)"))
    check = GemSetCheck.new(LockComparison.new(set, other), ruby: "r34")
    assert_equal "it locks nokogiri 1.19.7 where the set has 1.18.10 (and 1 more: mini_portile2); to run one nokogiri on every ruby, lock r34's " \
                 "platform in the app (bundle lock --add-platform x86_64-linux-gnu) or pin it to the set's version " \
                 "(gems: { nokogiri: \"1.18.10\" }); or let each ruby resolve its own (gems: per_ruby)", check.refusal
    refute LockComparison.new(set, other).only_in_reference.first.build_dependency?,
           "nokogiri's version changed: mini_portile2 is no platform's build dependency here"
  end

  it "refuses a gem of the set another ruby does not lock for no platform's sake, and says the gems it adds" do
    other = lock(SOURCE_SPECS.sub("rack (3.0.9)\n", "") + "base64 (0.2.0)\n")
    check = GemSetCheck.new(LockComparison.new(set, other), ruby: "r34")
    assert_match(/\Ait does not lock rack \(the set has 3\.0\.9\); to run one rack on every ruby, pin it/, check.refusal)
    assert_equal ["r34 adds to the gem set: base64 0.2.0"], check.notes
  end

  it "treats a build dependency's own build dependencies as build dependencies" do
    deeper = SOURCE_SPECS.sub("mini_portile2 (2.8.9)", "mini_portile2 (2.8.9)\n  tool_helper (~> 1.0)") + "tool_helper (1.0.0)\n"
    dropped = LockComparison.new(lock(deeper), precompiled).only_in_reference
    assert_equal [%w[mini_portile2 true], %w[tool_helper true]], dropped.map { |g| [g.name, g.build_dependency?.to_s] }
  end

  it "names what a ruby changed of the app's own lock, not the gems a server adds" do
    app_lock = lock(SOURCE_SPECS.sub(/^puma.*\n.*\n/, "").sub("nio4r (2.7.5)\n", ""))
    other = lock(PRECOMPILED_SPECS.sub("rack (3.0.9)", "rack (3.1.12)"))
    check = GemSetCheck.new(LockComparison.new(app_lock, other), ruby: "r34", reference: "the app's Gemfile.lock")
    assert_equal ["r34 changed the app's Gemfile.lock: rack 3.1.12 (locked: 3.0.9)",
                  "r34 runs the app's Gemfile.lock's versions as other platforms: nokogiri 1.18.10 x86_64-linux-gnu " \
                  "(the app's Gemfile.lock: source)",
                  "r34 leaves out mini_portile2 2.8.9, which the app's Gemfile.lock needs only to compile nokogiri from source"],
                 check.changes
    assert_empty GemSetCheck.new(LockComparison.new(app_lock, set), ruby: "ruby", reference: "x").changes,
                 "the server's gems (puma, nio4r) are no change"
  end
end
