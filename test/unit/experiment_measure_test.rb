# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

# `measure:` (time, instructions, or both) and `load.count` (a window of a
# fixed number of requests): parsed, checked, in the fingerprint only when
# given, and planned (an instructions trial of each configuration in each
# batch when both are measured).
describe "Rackbench::Experiment measure and load.count" do
  include Rackbench::Test::ExperimentSupport

  it "measures time by default, and keeps the fingerprint of a file without the new keys" do
    plain = build_experiment
    assert_equal ["time"], plain.measure
    refute plain.instructions?
    assert_nil plain.configurations.first.load[:count]
    assert_equal plain.fingerprint, build_experiment("measure" => "time", "load" => { "count" => nil }).fingerprint
  end

  it "takes instructions alone or both, in one order, with a count for the window" do
    alone = build_experiment("measure" => "instructions", "load" => { "count" => 2000 })
    both = build_experiment("measure" => %w[instructions time], "load" => { "count" => 2000 })
    assert_equal ["instructions"], alone.measure
    assert_equal %w[time instructions], both.measure
    assert both.instructions?
    assert_equal 2000, alone.configurations.first.load[:count]
    assert_equal 3, [alone, both, build_experiment("load" => { "count" => 2000 })].map(&:fingerprint).uniq.size
  end

  it "gives an experiment that counts instructions one connection unless the file sets them" do
    assert_equal [16], build_experiment.load["connections"]
    assert_equal [1], build_experiment("measure" => "instructions", "load" => { "count" => 9 }).load["connections"]
    assert_equal [1], build_experiment("measure" => %w[time instructions], "load" => { "count" => 9 }).load["connections"]
    assert_equal [4], build_experiment("measure" => "instructions", "load" => { "count" => 9, "connections" => 4 })
      .load["connections"]
    # Several processes: four connections each, so that the warmup reaches every worker.
    assert_equal [8], build_experiment("measure" => "instructions", "processes" => [1, 2], "load" => { "count" => 9 })
      .load["connections"]
  end

  it "takes a think time, left to the trial's measure when auto" do
    assert_equal [nil], build_experiment.load["think"]
    assert_equal [nil], build_experiment("load" => { "think" => "auto" }).load["think"]
    assert_equal 0.02, build_experiment("load" => { "think" => "20ms" }).configurations.first.load[:think_s]
    assert_config_error({ "load" => { "think" => "10ms", "rate" => 100 } },
                        "load.think: is a closed-loop client's pause: it cannot be combined with load.rate")
    assert_equal build_experiment.fingerprint, build_experiment("load" => { "think" => nil }).fingerprint
  end

  it "takes a warmup of a fixed count with a window of one, instead of a timed warmup" do
    assert_equal 500, build_experiment("load" => { "count" => 9, "warmup_count" => 500 }).configurations.first.load[:warmup_count]
    assert_config_error({ "load" => { "warmup_count" => 500 } }, "load.warmup_count: needs load.count")
    assert_config_error({ "load" => { "count" => 9, "warmup_count" => 500, "warmup" => "1s" } },
                        "load.warmup_count: cannot be given with load.warmup: both end the warmup")
  end

  it "makes load.count a dimension like any load key" do
    experiment = build_experiment("load" => { "count" => [500, 1000] })
    assert_equal [500, 1000], experiment.configurations.map { |c| c.dims["load.count"] }
  end

  it "refuses what a count or instructions cannot be" do
    assert_config_error({ "measure" => "cycles" }, "measure: unknown measure \"cycles\"; known: time, instructions")
    assert_config_error({ "measure" => "instructions" }, "measure: instructions needs load.count")
    assert_config_error({ "measure" => "instructions", "load" => { "count" => [nil, 100] } },
                        "measure: instructions needs load.count")
    assert_config_error({ "load" => { "count" => 0 } }, "load.count")
    assert_config_error({ "load" => { "count" => 10, "duration" => "5s" } },
                        "load.count: cannot be given with load.duration: both end the measured window")
    assert_config_error({ "load" => { "count" => 10, "rate" => 100 } },
                        "load.count: is a closed-loop window: it cannot be combined with load.rate")
    assert_config_error({ "load" => { "count" => 10, "protocol" => "h2c" } },
                        "load.count: is not supported with load.protocol h2c or h2 yet")
  end

  it "refuses, with the reason, the load settings an instructions trial cannot count steadily, and no others" do
    counting = ->(load) { { "measure" => "instructions", "load" => { "count" => 100 }.merge(load) } }
    assert_config_error(counting.call("threads" => 2, "connections" => 2),
                        "load.threads: 2 engine threads cannot count instructions")
    assert_config_error(counting.call("warmup_count" => 999), "load.warmup_count: 999 is too few for instructions")
    assert_config_error(counting.call("host" => "ssh://bench@10.0.0.2", "timeout" => "2s"), "load.host: an instructions window's requests wait")
    # Safe: every request waits for the server to sleep, the GC is apart.
    build_experiment(counting.call("connections" => 4, "think" => 0, "warmup_count" => 1000))
    # A time trial takes them all.
    build_experiment("load" => { "count" => 100, "threads" => 2, "connections" => 2, "warmup_count" => 10 })
  end

  it "estimates a count's window at a guess per request, ten times that under valgrind" do
    config = build_experiment("load" => { "count" => 3000, "warmup" => "2s" }).configurations.first
    assert_in_delta 2.0 + 3.0 + Rackbench::Experiment::Config::OVERHEAD_S, config.estimated_s
  end

  describe "the plan" do
    def plan(measure, batches: 2)
      experiment = build_experiment("measure" => measure, "load" => { "count" => 100 }, "batches" => batches,
                                    "servers" => %w[puma webrick])
      Rackbench::Experiment::Plan.new(experiment)
    end

    it "runs only instructions trials when instructions is the only measure" do
      trials = plan("instructions").trials
      assert_equal 4, trials.size
      assert trials.all?(&:instructions?)
      assert trials.all? { |t| t.key.end_with?("#instructions") }
      assert_in_delta trials.first.config.estimated_s * 10, trials.first.estimated_s
    end

    it "adds an instructions trial of each configuration to each batch, the time trials keeping their order" do
      both = plan(%w[time instructions]).trials
      time = plan("time").trials
      assert_equal 8, both.size
      timed, counted = both.partition { |t| t.measure == "time" }
      assert_equal time.map(&:key), timed.map(&:key)
      assert_equal 4, counted.size
      assert_equal [1, 1, 2, 2], counted.map(&:batch).sort
      assert_equal both.map(&:key).uniq.size, both.size
      # Batch by batch: every batch is a whole replicate of both measures.
      assert_equal both.map(&:batch), both.map(&:batch).sort
      assert_equal both.map(&:key), plan(%w[time instructions]).trials.map(&:key), "seeded: the same order again"
    end
  end
end
