# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# Runner::Steps over the fakes: each derived experiment is an ordinary
# stored run; a step already stored runs nothing again.
describe Rackbench::Runner::Steps do
  let(:dir) { Dir.mktmpdir("rackbench-steps") }
  let(:out) { StringIO.new }
  let(:err) { StringIO.new }
  let(:install) { Fakes.install }
  let(:engine) { Fakes::Engine.new }
  let(:launcher) { Fakes::Launcher.new }
  let(:experiment) do
    Rackbench::Experiment.parse(<<~YAML, source: "steps.yml", base_dir: dir)
      name: steps-test
      seed: 3
      rubies: [ruby]
      servers: [puma, webrick]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
  end
  let(:steps) do
    collaborators = { engine: engine, launcher: launcher, bundles: Fakes::Bundles.new,
                      companions: Fakes.companions }
    Rackbench::Runner::Steps.new(
      results_dir: dir, out: out, err: err, installs: [install], machine: { "machine" => "fake" },
      runner_options: { layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                        stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" }, collaborators: collaborators,
                        watchdog: Fakes::Watchdog.new }
    )
  end

  after { FileUtils.rm_rf(dir) }

  def step(rate)
    puma = experiment.configurations.find { |c| c.server.label == "puma" }
    experiment.derive(name: "steps-test.rate-#{rate}", only: puma, changes: { "load.rate" => rate })
  end

  it "stores each step as its own experiment, with the step's settings in the trial that ran" do
    first = steps.run(step(100))
    second = steps.run(step(200))
    assert_equal [1, 1], [first.records.size, second.records.size]
    refute_equal first.experiment_id, second.experiment_id
    assert_equal [100.0, 200.0], engine.settings.map(&:rate)
    assert(first.records.all?(&:ok?))
    stored = Rackbench::Store.open(dir, &:experiments)
    assert_equal %w[steps-test.rate-100 steps-test.rate-200], stored.map { |e| e[:name] }
    assert_equal "fake", stored.first[:environment]["machine"]
    assert stored.first[:environment].key?("rubies"), "each step adds its own rubies to the shared machine"
  end

  it "runs a stored step no more: the stored outcome comes back, as #stored reads it" do
    assert_nil steps.stored(step(100))
    first = steps.run(step(100))
    again = steps.run(step(100))
    assert_equal 1, engine.calls
    assert_equal first.records.map(&:key), again.records.map(&:key)
    assert_equal first.records.map(&:key), steps.stored(step(100)).records.map(&:key)
    assert_nil steps.stored(step(300))
  end
end
