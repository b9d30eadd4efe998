# frozen_string_literal: true

require "test_helper"
require "rackbench/tune"

# The tune: section of an experiment file, and what it does to the
# experiment's fingerprint.
describe Rackbench::Tune::Settings do
  BASE = <<~YAML
    name: t
    servers: [puma]
    apps: [rack-hello]
  YAML

  def parse(tune_line)
    Rackbench::Experiment.parse("#{BASE}#{tune_line}\n", source: "t.yml")
  end

  def error(tune_line)
    assert_raises(Rackbench::ConfigError) { parse(tune_line) }.message
  end

  it "reads the budget, the target and the candidates" do
    tune = parse("tune: { memory: 1GB, p99.9: 50ms, processes: [4, 1, 2], threads: 8, batches: 3, connections: 64 }").tune
    assert_equal [1_000_000_000, 99.9, 50_000.0], [tune.memory_bytes, tune.percentile, tune.target_us]
    assert_equal [[1, 2, 4], [8], 3, 64], [tune.processes, tune.threads, tune.batches, tune.connections]
    assert_equal "p99.9", tune.percentile_name
    assert_equal 64, tune.connections_for(4, 8), "the file's connections for every candidate"
    assert_equal 768 * 2**20, parse("tune: { memory: 768MiB, p99: 1s }").tune.memory_bytes
    assert_equal 150_000_000, parse("tune: { memory: 150 MB, p50: 10ms }").tune.memory_bytes
  end

  it "defaults to powers of 2, two connections per server thread, the experiment's batches" do
    tune = parse("tune: { memory: 1GB, p99: 50ms }").tune
    assert_equal [1, 2, 4, 8, 16], tune.candidate_threads
    processes = tune.candidate_processes
    assert_equal 1, processes.first
    assert_operator processes.size, :>=, 2
    assert(processes.each_cons(2).all? { |a, b| b == 2 * a })
    assert_operator processes.last, :<=, [Etc.nprocessors, 2].max
    assert_equal [24, 2], [tune.connections_for(3, 4), tune.connections_for(1, 1)]
    assert_nil tune.batches
    assert_in_delta 0.05, tune.knee_tolerance
    assert_nil parse("").tune
  end

  it "names the key of every mistake" do
    assert_match(/t\.yml: tune\.memory: .*1GB/, error("tune: { memory: lots, p99: 50ms }"))
    assert_match(/tune\.memory: required/, error("tune: { p99: 50ms }"))
    assert_match(/tune: needs one latency target/, error("tune: { memory: 1GB }"))
    assert_match(/2 latency targets/, error("tune: { memory: 1GB, p99: 50ms, p50: 5ms }"))
    assert_match(/tune\.threads/, error("tune: { memory: 1GB, p99: 50ms, threads: [0] }"))
    assert_match(/tune\.knee_tolerance/, error("tune: { memory: 1GB, p99: 50ms, knee_tolerance: 2 }"))
    assert_match(/tune\.memry: unknown key/, error("tune: { memry: 1GB, memory: 1GB, p99: 50ms }"))
  end

  it "leaves the fingerprint of a file without it alone, and changes it with it" do
    plain = Rackbench::Experiment.parse(BASE)
    refute plain.canonical.key?("tune")
    tuned = parse("tune: { memory: 1GB, p99: 50ms }")
    refute_equal plain.fingerprint, tuned.fingerprint
    refute_equal tuned.fingerprint, parse("tune: { memory: 2GB, p99: 50ms }").fingerprint
    assert_equal tuned.tune, tuned.with(seed: 9).tune, "with keeps it"
    derived = tuned.derive(name: "t.step", changes: { "tune" => nil })
    assert_nil derived.tune
    assert_equal Rackbench::Experiment.parse(BASE.sub("name: t", "name: t.step")).fingerprint, derived.fingerprint,
                 "a step is the plain experiment it would be without the section"
  end
end
