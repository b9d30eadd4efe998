# frozen_string_literal: true

require "test_helper"

# The experiment's gems: key: per_ruby, pins, and gem.NAME dimensions that
# labels, exclude, derive and the fingerprint treat like any other.
describe "Rackbench::Experiment gems:" do
  GEMS_EXPERIMENT = <<~YAML
    name: gems
    rubies: [ruby]
    servers: [puma]
    apps: [rails-hello]
  YAML

  def parse(extra)
    base = extra.start_with?("rubies:") ? GEMS_EXPERIMENT.sub(/^rubies: .*\n/, "") : GEMS_EXPERIMENT
    Rackbench::Experiment.parse(base + extra, source: "gems.yml")
  end

  def error(extra)
    assert_raises(Rackbench::ConfigError) { parse(extra) }.message
  end

  it "keeps the fingerprint of a file without the key, with gems: shared too" do
    plain = parse("")
    assert_nil plain.gems
    refute plain.gems_per_ruby?
    assert_equal plain.fingerprint, parse("gems: shared\n").fingerprint
    refute_equal plain.fingerprint, parse("gems: per_ruby\n").fingerprint
    refute_equal plain.fingerprint, parse("gems: { rails: \"~> 7.2.0\" }\n").fingerprint
    assert_equal({}, plain.configurations.first.gems)
    assert_equal %w[ruby server app processes threads], plain.dimensions.keys
  end

  it "makes a gem with several requirements a dimension, and one requirement a pin in every configuration" do
    experiment = parse(<<~YAML)
      gems: { rails: ["~>7.1.0", "~> 8.0.0"], rack: ">= 3, <4" }
    YAML
    assert_equal ["~> 7.1.0", "~> 8.0.0"], experiment.dimensions["gem.rails"]
    refute experiment.dimensions.key?("gem.rack"), "a single requirement is a pin"
    pins = experiment.configurations.map(&:gems)
    assert_equal [{ "rails" => "~> 7.1.0", "rack" => ">= 3, < 4" }, { "rails" => "~> 8.0.0", "rack" => ">= 3, < 4" }], pins
    assert_equal "ruby=ruby server=puma app=rails-hello processes=1 threads=1 gem.rails=~> 8.0.0",
                 experiment.configurations.last.to_s
    assert_equal experiment.fingerprint, parse("gems: { rack: \">=3, < 4\", rails: [\"~> 8.0.0\", \"~>7.1.0\"] }\n").fingerprint,
                 "the same requirements, spelt and ordered otherwise"
  end

  it "writes an exact version as the bare version, and is per_ruby with pins when asked" do
    experiment = parse("gems: { per_ruby: true, rails: \"= 7.2.2\" }\n")
    assert experiment.gems_per_ruby?
    assert_equal({ "rails" => "7.2.2" }, experiment.configurations.first.gems)
    refute parse("gems: { per_ruby: false, rails: \"7.2.2\" }\n").gems_per_ruby?
  end

  it "forces the ruby platform when asked, alone or beside per_ruby and pins, and only then changes the fingerprint" do
    forced = parse("gems: { force_ruby_platform: true }\n")
    assert forced.gems_force_ruby_platform?
    refute forced.gems_per_ruby?
    assert_equal({}, forced.configurations.first.gems, "no pin, no dimension")
    refute_equal parse("").fingerprint, forced.fingerprint
    assert_equal parse("").fingerprint, parse("gems: { force_ruby_platform: false }\n").fingerprint
    refute parse("").gems_force_ruby_platform?
    both = parse("gems: { per_ruby: true, force_ruby_platform: true, rails: \"~> 7.2.0\" }\n")
    assert both.gems_per_ruby? && both.gems_force_ruby_platform?
    assert_equal({ "rails" => "~> 7.2.0" }, both.configurations.first.gems)
    step = forced.derive(name: "step", only: forced.configurations.first)
    assert step.gems_force_ruby_platform?, "a derived step compiles as its experiment did"
    assert_match(/gems\.force_ruby_platform: must be true or false/, error("gems: { force_ruby_platform: always }\n"))
  end

  it "excludes by a gem dimension's values, spelt any way, and refuses values outside it" do
    experiment = parse(<<~YAML)
      rubies: [ruby, { name: other, ruby: ruby, options: [--yjit] }]
      gems: { rails: ["~> 7.1.0", "~> 8.0.0"] }
      exclude: [{ ruby: ruby, gem.rails: "~>8.0.0" }]
    YAML
    assert_equal 3, experiment.configurations.size
    refute(experiment.configurations.any? { |c| c.dims["ruby"] == "ruby" && c.gems["rails"] == "~> 8.0.0" })
    message = error("gems: { rails: [\"~> 7.1.0\", \"~> 8.0.0\"] }\nexclude: [{ gem.rails: \"~> 7.2.0\" }]\n")
    assert_match(/exclude\[0\]\.gem\.rails: "~> 7\.2\.0" is not in the matrix.*values: ~> 7\.1\.0, ~> 8\.0\.0/, message)
    message = error("gems: { rails: \"~> 7.1.0\" }\nexclude: [{ gem.rails: \"~> 7.1.0\" }]\n")
    assert_match(/gem\.rails is not a dimension: it has one value/, message)
  end

  it "says what is wrong with a gems: value, naming the key" do
    assert_match(/gems\.rails: must be a requirement string such as "~> 7\.2\.0" \(quoted\), got 8\.0/,
                 error("gems: { rails: 8.0 }\n"))
    assert_match(/gems: unknown gems mode "per-ruby" \(did you mean per_ruby\?\)/, error("gems: per-ruby\n"))
    assert_match(/gems\.rails: "~> x" is not a gem requirement/, error("gems: { rails: \"~> x\" }\n"))
    assert_match(/gems\.rails\[1\]: duplicate|gems\.rails: duplicate value "~> 7\.1\.0"/,
                 error("gems: { rails: [\"~> 7.1.0\", \"~>7.1.0\"] }\n"))
    assert_match(/gems\."no good" is not a gem name|gems\.no good: "no good" is not a gem name/,
                 error("gems: { \"no good\": \"1.0\" }\n"))
    assert_match(/gems: must name at least one gem/, error("gems: {}\n"))
    assert_match(/gems\.per_ruby: must be true or false/, error("gems: { per_ruby: yes please }\n"))
  end

  it "derives a step with the configuration's own requirement as a pin" do
    experiment = parse("gems: { rails: [\"~> 7.1.0\", \"~> 8.0.0\"] }\n")
    config = experiment.configurations.last
    step = experiment.derive(name: "step", only: config)
    assert_equal [{ "rails" => "~> 8.0.0" }], step.configurations.map(&:gems)
    refute step.dimensions.key?("gem.rails")
    assert_equal experiment.configurations, step.gem_set_configurations, "the whole experiment's gem sets"
    assert_equal step.fingerprint, step.with(seed: step.seed).fingerprint
    assert_equal experiment.configurations, step.with(seed: 9).gem_set_configurations
  end

  it "tells whether a version satisfies a normalized requirement" do
    gems = Rackbench::Experiment::Gems
    assert gems.satisfied?("~> 7.2.0", "7.2.4")
    refute gems.satisfied?("~> 7.2.0", "8.0.1")
    assert gems.satisfied?(">= 7.1, < 8", "7.2.2.1")
    refute gems.satisfied?(">= 7.1, < 8", "8.0.0")
    assert_equal ["~> 7.2.0", "< 7.2.3"], gems.parts("~> 7.2.0, < 7.2.3")
  end
end
