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

  after { FileUtils.rm_rf(dir) }

  def run_experiment(yaml)
    file = File.join(dir, "experiment.yml")
    File.write(file, yaml)
    results = File.join(dir, "results-#{File.basename(Dir.mktmpdir(nil, dir))}")
    out, err, status = rackbench("run", file, "--results", results)
    assert status.success?, "run failed: #{err}\n#{out}"
    [Rackbench::Store.open(results) { |store| store.trials }, out]
  end

  # One run (each trial boots Rails: the suite's time is counted in
  # boots): the value set by the configuration at 1 and 4 threads, an
  # explicit value above the threads (it wins), one below (flagged).
  it "sets RAILS_MAX_THREADS and the pool from the threads, lets an explicit value win, flags a pool below the threads" do
    trials, out = run_experiment(<<~YAML)
      name: pool-follows
      rubies:
        - ruby
        - { name: ruby-pool7, ruby: ruby, env: { RAILS_MAX_THREADS: "7" } }
        - { name: ruby-pool2, ruby: ruby, env: { RAILS_MAX_THREADS: "2" } }
      servers: [puma]
      apps: [rails-posts]
      threads: [1, 4]
      load: { connections: 2, duration: 0.5s, warmup: 0.2s, timeout: 5s }
      exclude:
        - { ruby: [ruby-pool7, ruby-pool2], threads: 1 }
    YAML
    assert_equal(%w[ok ok ok ok], trials.map(&:status), trials.map(&:reason).inspect)
    trials = trials.to_h { |trial| [[trial.ruby, trial.threads], trial] }
    [1, 4].each do |threads|
      identity = trials.fetch(["ruby", threads]).identity
      assert_equal threads.to_s, identity["env"]["RAILS_MAX_THREADS"], "seen inside the server"
      assert_equal threads.to_s, identity["env"]["RAILS_MIN_THREADS"]
      assert_equal "1", identity["env"]["WEB_CONCURRENCY"]
      assert_equal threads, identity["active_record_pool"], "the pool ActiveRecord configured"
      assert_empty identity["warnings"]
    end

    identity = trials.fetch(["ruby-pool7", 4]).identity
    assert_equal "7", identity["env"]["RAILS_MAX_THREADS"], "the experiment's value wins"
    assert_equal "4", identity["env"]["RAILS_MIN_THREADS"]
    assert_equal 7, identity["active_record_pool"]
    assert_empty identity["warnings"]

    identity = trials.fetch(["ruby-pool2", 4]).identity
    assert_equal 2, identity["active_record_pool"]
    assert_equal 1, identity["warnings"].size
    assert_match(/ActiveRecord's pool is 2 connections, below the 4 threads/, identity["warnings"].first)
    warnings = out.lines.grep(/warning:.*pool/)
    assert_equal 1, warnings.size, out
    assert_match(/warning: .*rails-posts.*ruby-pool2.*ActiveRecord's pool is 2/, warnings.first)
  end
end
