# frozen_string_literal: true

require "test_helper"

describe Rackbench::Micro::Settings do
  def build(**options)
    Rackbench::Micro::Settings.build(**options)
  end

  def assert_usage_error(pattern, **options)
    error = assert_raises(Rackbench::UsageError) { build(**options) }
    assert_match pattern, error.message
    assert_equal 1, error.message.lines.size, "one line: #{error.message}"
  end

  let(:experiment) do
    Rackbench::Experiment.parse(<<~YAML, source: "exp.yml", known_servers: %w[puma], known_apps: %w[rack-hello])
      name: nightly
      seed: 42
      batches: 5
      rubies:
        - ruby
        - { name: ruby-yjit, ruby: ruby, options: ["--yjit"], env: { MALLOC_ARENA_MAX: 2 } }
      servers: [puma]
      apps: [rack-hello]
    YAML
  end

  it "defaults to the running ruby, every mode, 1/10/100 workers and 100,000 messages a round" do
    settings = build
    assert_equal "micro-fibers", settings.name
    assert_equal [{ name: nil, ruby: RbConfig.ruby, options: [], env: {} }], settings.rubies
    assert_equal %w[threads processes fibers], settings.modes
    assert_equal [1, 10, 100], settings.workers
    assert_nil settings.messages
    assert_equal [100_000, 10_000, 1000], [1, 10, 100].map { |w| settings.messages_for(w) }
    assert_equal [3, 1, 1, 1], [settings.batches, settings.seed, settings.warmup, settings.work]
    assert_in_delta 300.0, settings.timeout_s
    assert_nil settings.cpus
    assert settings.frozen?
  end

  it "parses the command line's strings" do
    settings = build(modes: "fibers, threads", workers: "2,4", messages: "50", warmup: "0", work: "3",
                     batches: "2", seed: "7", timeout: "90s", cpus: "0-2,5", rubies: ["ruby --yjit MALLOC_ARENA_MAX=2"])
    assert_equal %w[fibers threads], settings.modes
    assert_equal [2, 4], settings.workers
    assert_equal [50, 50], [settings.messages_for(2), settings.messages_for(4)]
    assert_nil settings.total_messages
    assert_equal [0, 3, 2, 7], [settings.warmup, settings.work, settings.batches, settings.seed]
    assert_in_delta 90.0, settings.timeout_s
    assert_equal [0, 1, 2, 5], settings.cpus
    assert_equal [{ name: nil, ruby: "ruby", options: ["--yjit"], env: { "MALLOC_ARENA_MAX" => "2" } }], settings.rubies
    assert_equal :all, build(cpus: "all").cpus
  end

  it "takes name, rubies, seed and batches from an experiment file, options winning" do
    settings = build(experiment: experiment)
    assert_equal "nightly-micro-fibers", settings.name
    assert_equal [42, 5], [settings.seed, settings.batches]
    assert_equal %w[ruby ruby-yjit], settings.rubies.map { |r| r[:name] }
    assert_equal({ "MALLOC_ARENA_MAX" => "2" }, settings.rubies.last[:env])
    assert_equal ["--yjit"], settings.rubies.last[:options]

    overridden = build(experiment: experiment, seed: 1, batches: 2, rubies: ["jruby"])
    assert_equal [1, 2], [overridden.seed, overridden.batches]
    assert_equal ["jruby"], overridden.rubies.map { |r| r[:ruby] }
  end

  it "fingerprints what is measured, not how it is spelt or where it is pinned" do
    a = build(workers: "10,1", modes: "fibers,threads", timeout: "10s", cpus: "0")
    b = build(workers: [1, 10], modes: %w[threads fibers], timeout: "5m")
    assert_equal a.fingerprint, b.fingerprint
    refute_equal a.fingerprint, build(workers: "1,10", modes: "threads,fibers", seed: 2).fingerprint
    refute_equal a.fingerprint, build(workers: "1,10", modes: "threads,fibers", messages: 5).fingerprint
    refute_equal a.fingerprint, build(workers: "1,10", modes: "threads,fibers", rubies: ["ruby --yjit"]).fingerprint
    assert_match(/\A\h{64}\z/, a.fingerprint)
  end

  it "rejects bad values with one line naming the option" do
    assert_usage_error(/--modes: unknown mode "coroutines" \(modes: threads, processes, fibers\)/, modes: "threads,coroutines")
    assert_usage_error(/--workers: "0" is not an integer from 1 to 2000/, workers: "1,0")
    assert_usage_error(/--workers: "x" is not an integer/, workers: "x")
    assert_usage_error(/--workers: "" is not an integer/, workers: "1,")
    assert_usage_error(/--workers: 10 is given twice/, workers: "10,10")
    assert_usage_error(/--workers: "5000" is not an integer from 1 to 2000/, workers: "5000")
    assert_usage_error(/--messages: "-1" is not an integer at least 1/, messages: "-1")
    assert_usage_error(/--messages \(per worker\) or --total-messages \(per run\), not both/,
                       messages: "1", total_messages: "2")
    assert_usage_error(/--warmup: "-1"/, warmup: "-1")
    assert_usage_error(/--batches: "0" is not an integer at least 1/, batches: "0")
    assert_usage_error(/--timeout: invalid duration "soon"/, timeout: "soon")
    assert_usage_error(/--timeout: must be more than 0/, timeout: "0s")
    assert_usage_error(/--cpus: "zero" is not a CPU list/, cpus: "zero")
    assert_usage_error(/--modes needs at least one value/, modes: "")
    assert_usage_error(/--ruby needs a ruby name/, rubies: [" "])
  end
end
