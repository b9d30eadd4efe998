# frozen_string_literal: true

require "test_helper"
require "open3"

# Threads and processes reach the server: `rackbench run` on rails-posts
# under Puma, and what every trial's identity says the server saw
# (RAILS_MAX_THREADS, WEB_CONCURRENCY) and what ActiveRecord configured
# (its pool, which rails-posts' database.yml reads from RAILS_MAX_THREADS).
describe "threads, processes and the database pool (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-concurrency") }
  let(:exe) { File.expand_path("../../exe/rackbench", __dir__) }

  after { FileUtils.rm_rf(dir) }

  def run_experiment(yaml)
    file = File.join(dir, "experiment.yml")
    File.write(file, yaml)
    results = File.join(dir, "results-#{File.basename(Dir.mktmpdir(nil, dir))}")
    out, err, status = Open3.capture3(RbConfig.ruby, exe, "run", file, "--results", results)
    assert status.success?, "run failed: #{err}\n#{out}"
    [Rackbench::Store.open(results) { |store| store.trials }, out]
  end

  def by_threads(trials)
    trials.to_h { |trial| [trial.threads, trial] }
  end

  it "sets RAILS_MAX_THREADS and the pool to 4 with 4 threads and to 1 with 1; an explicit value wins" do
    trials, out = run_experiment(<<~YAML)
      name: pool-follows
      rubies: [ruby]
      servers: [puma]
      apps: [rails-posts]
      threads: [1, 4]
      load: { connections: 2, duration: 0.5s, warmup: 0.2s, timeout: 5s }
    YAML
    assert_equal(%w[ok ok], trials.map(&:status), trials.map(&:reason).inspect)
    trials = by_threads(trials)
    [1, 4].each do |threads|
      identity = trials.fetch(threads).identity
      assert_equal threads.to_s, identity["env"]["RAILS_MAX_THREADS"], "seen inside the server"
      assert_equal threads.to_s, identity["env"]["RAILS_MIN_THREADS"]
      assert_equal "1", identity["env"]["WEB_CONCURRENCY"]
      assert_equal threads, identity["active_record_pool"], "the pool ActiveRecord configured"
      assert_empty identity["warnings"]
    end
    refute_match(/warning:.*pool/, out)

    trials, out = run_experiment(<<~YAML)
      name: pool-explicit
      rubies: [ruby]
      servers: [puma]
      apps: [rails-posts]
      threads: [4]
      env: { RAILS_MAX_THREADS: "7" }
      load: { connections: 2, duration: 0.5s, warmup: 0.2s, timeout: 5s }
    YAML
    identity = trials.first.identity
    assert_equal "ok", trials.first.status, trials.first.reason
    assert_equal "7", identity["env"]["RAILS_MAX_THREADS"], "the experiment's value wins"
    assert_equal "4", identity["env"]["RAILS_MIN_THREADS"]
    assert_equal 7, identity["active_record_pool"]
    refute_match(/warning:.*pool/, out)
  end

  it "flags, without failing, a pool below the threads" do
    trials, out = run_experiment(<<~YAML)
      name: pool-below
      rubies: [ruby]
      servers: [puma]
      apps: [rails-posts]
      threads: [4]
      env: { RAILS_MAX_THREADS: "2" }
      load: { connections: 2, duration: 0.5s, warmup: 0.2s, timeout: 5s }
    YAML
    trial = trials.first
    assert_equal "ok", trial.status, trial.reason
    assert_equal 2, trial.identity["active_record_pool"]
    assert_equal 1, trial.identity["warnings"].size
    assert_match(/ActiveRecord's pool is 2 connections, below the 4 threads/, trial.identity["warnings"].first)
    assert_match(/warning: .*rails-posts.*ActiveRecord's pool is 2/, out)
  end
end
