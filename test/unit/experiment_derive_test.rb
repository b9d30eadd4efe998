# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

describe Rackbench::Experiment::Derive do
  include Rackbench::Test::ExperimentSupport

  let(:experiment) { Rackbench::Experiment.load(fixture("full.yml"), **known) }

  def derive(**options)
    experiment.derive(name: "full.step-1", **known, **options)
  end

  it "narrows to the one configuration named, with its own values" do
    config = experiment.configurations.find do |c|
      c.server.label == "puma" && c.processes == 2 && c.threads == 4 && c.load[:connections] == 64 &&
        c.ruby.label == "ruby-yjit" && c.app.name == "myapp" && c.env["RUBY_GC_HEAP_INIT_SLOTS"] == "10000"
    end
    derived = derive(only: config)

    assert_equal 1, derived.configurations.size
    only = derived.configurations.first
    assert_equal ["ruby-yjit", "puma", "myapp", 2, 4, 64],
                 [only.ruby.label, only.server.label, only.app.name, only.processes, only.threads, only.load[:connections]]
    assert_equal config.load, only.load
    assert_equal config.env, only.env
    assert_equal config.ruby, only.ruby
    assert_equal config.server, only.server
    assert_equal config.app, only.app # the app's relative path resolved against the parent's directory
  end

  it "keeps the seed and batches the command line gave, unless the changes set them" do
    changed = experiment.with(seed: 7, batches: 9)
    derived = changed.derive(name: "full.step-1", **known)
    assert_equal [7, 9], [derived.seed, derived.batches]
    assert_equal 2, changed.derive(name: "x", changes: { "batches" => 2 }, **known).batches
  end

  it "applies dotted changes, and a nil removes the key" do
    config = experiment.configurations.first
    derived = derive(only: config, changes: { "load.rate" => 850, "load.timeout" => nil })
    load = derived.configurations.first.load
    assert_in_delta 850.0, load[:rate]
    assert_nil config.load[:rate]
    assert_in_delta 0.5, config.load[:timeout_s] # the file's
    refute_equal 0.5, load[:timeout_s] # the default (calibrated)
  end

  it "is a file of its own: its name, text and fingerprint" do
    derived = derive(changes: { "load.rate" => 100 })
    assert_equal "full.step-1", derived.name
    assert_match(/\A# derived from experiment puma-vs-webrick/, derived.source_text)
    refute_equal experiment.fingerprint, derived.fingerprint
    reparsed = Rackbench::Experiment.parse(derived.source_text, base_dir: experiment.base_dir, **known)
    assert_equal derived.fingerprint, reparsed.fingerprint
    assert_equal experiment.configurations.size, derived.configurations.size
  end

  it "names the derived file when a change makes it invalid" do
    error = assert_raises(Rackbench::ConfigError) { derive(changes: { "load.connections" => 0 }) }
    assert_match(/derived: full\.step-1/, error.message)
  end

  it "refuses a configuration of another experiment" do
    other = build_experiment.configurations.first
    assert_raises(ArgumentError) { derive(only: other) }
  end
end
