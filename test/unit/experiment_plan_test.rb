# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

describe Rackbench::Experiment::Plan do
  include Rackbench::Test::ExperimentSupport

  let(:sweep) do
    { "servers" => %w[puma webrick], "processes" => [1, 2], "threads" => [1, 4], "batches" => 3, "seed" => 42,
      "load" => { "duration" => "5s", "warmup" => "2s" } }
  end

  def plan(overrides = {}, **options)
    Rackbench::Experiment::Plan.new(build_experiment(sweep.merge(overrides)), **options)
  end

  def order(plan)
    plan.trials.map(&:key)
  end

  it "runs every configuration once per batch" do
    plan = plan()
    assert_equal 8 * 3, plan.size
    assert_equal plan.trials.map(&:key).uniq, plan.trials.map(&:key)
    keys = plan.trials.map { |t| t.config.key }
    assert_equal 3, keys.tally.values.uniq.first
  end

  it "goes batch by batch" do
    assert_equal [1] * 8 + [2] * 8 + [3] * 8, plan.trials.map(&:batch)
  end

  it "keys each trial by configuration and batch, and numbers it" do
    trial = plan.trials.first
    assert_equal "#{trial.config.key}#batch=1", trial.key
    assert_equal (1..24).to_a, plan.trials.map(&:index)
  end

  it "gives the same order for the same seed" do
    assert_equal order(plan), order(plan)
  end

  it "gives a different order for another seed" do
    refute_equal order(plan), order(plan({ "seed" => 43 }))
  end

  it "shuffles each batch differently, with Random.new(seed + batch)" do
    plan = plan()
    batches = plan.trials.group_by(&:batch).transform_values { |trials| trials.map { |t| t.config.key } }
    refute_equal batches[1], batches[2]
    sorted = build_experiment(sweep).configurations.map(&:key).sort
    assert_equal sorted.shuffle(random: Random.new(42 + 2)), batches[2]
    refute_equal sorted, batches[1], "not in matrix order"
  end

  it "does not depend on the order of lists in the file" do
    reordered = plan({ "servers" => %w[webrick puma], "threads" => [4, 1], "processes" => [2, 1] })
    assert_equal order(plan), order(reordered)
  end

  describe "unsupported configurations" do
    let(:webrick_single) do
      ->(config) { "WEBrick runs a single process" if config.server.name == "webrick" && config.processes > 1 }
    end

    it "are skipped up front with the adapter's reason" do
      plan = plan(unsupported: webrick_single)
      assert_equal 6 * 3, plan.size
      assert_equal 2, plan.skipped.size
      assert_equal ["WEBrick runs a single process"], plan.skipped.map(&:reason).uniq
      assert plan.skipped.all? { |s| s.config.processes == 2 && s.config.server.name == "webrick" }
      refute plan.trials.any? { |t| t.config.server.name == "webrick" && t.config.processes == 2 }
    end

    it "do not change the order of the others" do
      kept = order(plan).reject { |key| key.include?('"processes":2') && key.include?('"server":"webrick"') }
      assert_equal kept, order(plan(unsupported: webrick_single))
    end

    it "are asked about once per configuration" do
      asked = []
      plan(unsupported: ->(config) { asked << config.key && nil })
      assert_equal 8, asked.size
    end
  end

  it "lists the trials a resumed run still has to run" do
    plan = plan()
    done = plan.trials.first(5).map(&:key)
    assert_equal plan.trials.drop(5), plan.remaining(done)
    assert_equal [], plan.remaining(plan.trials.map(&:key))
  end

  it "estimates warmup + duration + 3 s per trial" do
    assert_in_delta 24 * (2 + 5 + 3), plan.estimated_s
    assert_in_delta 2 * 10.0, plan.estimated_s(plan.trials.first(2))
  end

  describe "#to_s" do
    it "prints the numbered trials, the skipped ones with reasons and the estimate" do
      text = plan({ "batches" => 1, "exclude" => [{ "server" => "webrick", "threads" => 4 }] },
                  unsupported: ->(c) { "WEBrick runs a single process" if c.server.name == "webrick" && c.processes > 1 }).to_s
      lines = text.lines.map(&:chomp)
      assert_equal "Plan for t (seed 42, 1 batch): 5 trials, estimated 50s (warmup + duration + ~3s per trial)", lines[0]
      assert_equal 5, lines.grep(/\A  \d\. batch 1  ruby=ruby server=/).size
      assert_includes lines, "Skipped, not supported (1 configuration):"
      assert_includes lines, "  - ruby=ruby server=webrick app=rack-hello processes=2 threads=1: WEBrick runs a single process"
      assert_includes lines, "Excluded by the experiment file: 2 configurations."
    end

    it "says when nothing is left to run" do
      assert_includes plan({}, unsupported: ->(_) { "no" }).to_s, "(no trials)"
    end
  end

  it "formats durations for humans" do
    assert_equal ["45s", "3m 05s", "1h 02m"], [45, 185, 3720].map { |s| Rackbench::Experiment::Plan.format_duration(s) }
  end

  it "is frozen" do
    plan = plan()
    assert_predicate plan, :frozen?
    assert_predicate plan.trials, :frozen?
    assert_predicate plan.trials.first, :frozen?
  end
end
