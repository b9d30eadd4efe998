# frozen_string_literal: true

require "test_helper"

# Stats::StepDetection (a published series' steps, found run after run),
# Stats.run_noise (its noise, from neighbouring runs) and the critical
# value of a z whose sigma was estimated.
describe "Rackbench::Stats::StepDetection" do
  let(:stats) { Rackbench::Stats }

  def gauss(random) = Math.sqrt(-2 * Math.log(1.0 - random.rand)) * Math.cos(2 * Math::PI * random.rand)

  # Medians of +n+ runs around +level+ with relative noise +noise+, times
  # +steps+ ({run => factor}, from that run on).
  def series(n, noise:, seed: 1, level: 1000.0, steps: {})
    random = Random.new(seed)
    factor = 1.0
    Array.new(n) do |i|
      factor *= steps.fetch(i, 1.0)
      level * factor * (1 + noise * gauss(random))
    end
  end

  def detect(medians, **options)
    stats::StepDetection.new(medians, **options)
  end

  describe "a young series (the default rule: history's change point and the gate's 2%)" do
    # Runs of 1000 with an interval of ±1%, then from run 3 on 1100.
    let(:medians) { [1000.0, 1002.0, 999.0, 1100.0, 1101.0, 1099.0] }
    let(:intervals) { medians.map { |m| [m * 0.99, m * 1.01] } }

    it "finds the run whose interval leaves the band, and confirms it with the run after" do
      steps = detect(medians, intervals: intervals, worse: "up").steps
      assert_equal 1, steps.size
      step = steps.first
      assert_equal [3, 3, 3, 3], [step.index, step.first, step.last, step.found_at]
      assert_equal %w[up default confirmed], [step.direction, step.rule, step.state]
      assert_equal 4, step.resolved_at
      assert_in_delta 0.1, step.change, 0.002
    end

    it "flags no step smaller than the default threshold, however tight the intervals" do
      small = [1000.0, 1000.0, 1000.0, 1015.0, 1015.0]
      tight = small.map { |m| [m * 0.999, m * 1.001] }
      assert_empty detect(small, intervals: tight).steps
      assert_equal [3], detect(small, intervals: tight, settings: stats::StepDetection::Settings.new(default_threshold: 0.01)).steps.map(&:index)
    end

    it "refutes a lone outlier: the run after it is back, and the level it left goes on" do
      outlier = [1000.0, 1001.0, 999.0, 1100.0, 1000.0, 1002.0]
      steps = detect(outlier, intervals: outlier.map { |m| [m * 0.99, m * 1.01] }).steps
      assert_equal [[3, "refuted", 4]], steps.map { |s| [s.index, s.state, s.resolved_at] }
    end

    it "never splits runs of one revision (a re-run), and needs an interval" do
      groups = %w[a b c c c c]
      assert_empty detect(medians, intervals: intervals, groups: %w[a b c c c c].map.with_index { |g, i| i >= 2 ? "c" : g }).steps
      assert_equal [3], detect(medians, intervals: intervals, groups: groups.each_with_index.map { |g, i| i == 3 ? "d" : g }).steps.map(&:index)
      assert_empty detect(medians).steps, "no interval, no step"
    end
  end

  describe "a series that learned its noise" do
    it "finds a big step from the run it happened, its size and interval, and confirms it" do
      medians = series(60, noise: 0.01, steps: { 40 => 0.9 })
      steps = detect(medians).steps
      assert_equal 1, steps.size, steps.inspect
      step = steps.first
      assert_equal [40, 40, "down", "learned", "confirmed"], [step.index, step.found_at, step.direction, step.rule, step.state]
      assert_includes step.first..step.last, 40
      assert_in_delta(-0.1, step.change, 0.01)
      assert_operator step.interval[0], :<, step.change
      assert_operator step.interval[1], :>, step.change
    end

    it "finds a step within the noise of one run once enough runs agree, at the run it happened" do
      # 2% noise, a 4% step: 2 sigma of one run, far more of ten.
      medians = series(80, noise: 0.02, seed: 4, steps: { 50 => 1.04 })
      step = detect(medians, worse: "up").steps.find { |s| s.state != "refuted" }
      refute_nil step
      assert_operator step.found_at, :>, 50, "found later than it happened"
      assert_includes step.first..step.last, 50
      assert_equal "up", step.direction
    end

    it "marks a regression fixed when a later step brings the figure back" do
      medians = series(120, noise: 0.005, seed: 2, steps: { 40 => 0.95, 80 => 1 / 0.95 })
      steps = detect(medians, worse: "down").steps
      assert_equal [[40, "down", 80], [80, "up", nil]], steps.map { |s| [s.index, s.direction, s.fixed_at] }
    end

    it "learns its noise from neighbouring runs: the threshold grows with it" do
      quiet = detect(series(100, noise: 0.002)).noise
      noisy = detect(series(100, noise: 0.03)).noise
      assert_equal %w[learned learned], [quiet.rule, noisy.rule]
      assert_in_delta 0.002, quiet.sigma, 0.0005
      assert_in_delta 0.03, noisy.sigma, 0.006
      assert_operator noisy.threshold, :>, 10 * quiet.threshold
      assert_equal "default", detect(series(5, noise: 0.01)).noise.rule
    end

    it "finds nothing in a year of pure noise, whatever the noise" do
      [0.001, 0.01, 0.05].each_with_index do |noise, i|
        assert_empty detect(series(365, noise: noise, seed: 20 + i)).steps.reject { |s| s.state == "refuted" }, "noise #{noise}"
      end
    end

    it "ignores a step smaller than the equivalence band, however quiet the series" do
      medians = series(100, noise: 0.0002, steps: { 60 => 1.005 })
      assert_empty detect(medians, settings: stats::StepDetection::Settings.new(equivalence: 0.01)).steps
      assert_equal [60], detect(medians, settings: stats::StepDetection::Settings.new(equivalence: 0.001)).steps.map(&:index)
    end

    it "skips runs without a median" do
      medians = series(60, noise: 0.01, steps: { 40 => 0.9 })
      medians[20] = nil
      medians[40] = nil
      step = detect(medians).steps.first
      assert_equal 41, step.index
    end
  end

  it "asks a sigma estimated from few pairs for more standard errors (Student's t)" do
    assert_in_delta 5.35, stats::StepDetection.critical(5.0, 100), 0.01
    assert_operator stats::StepDetection.critical(5.0, 20), :>, stats::StepDetection.critical(5.0, 60)
    assert_operator stats::StepDetection.critical(5.0, 1000), :<, 5.05
  end
end

describe "Rackbench::Stats.run_noise" do
  it "is the noise of one run from differences of neighbours, unmoved by a step among them" do
    random = Random.new(5)
    runs = Array.new(201) { 0.01 * Math.sqrt(-2 * Math.log(1.0 - random.rand)) * Math.cos(2 * Math::PI * random.rand) }
    diffs = runs.each_cons(2).map { |a, b| b - a }
    assert_in_delta 0.01, Rackbench::Stats.run_noise(diffs), 0.0012
    assert_in_delta Rackbench::Stats.run_noise(diffs), Rackbench::Stats.run_noise(diffs + [0.2]), 0.0003
    assert_raises(ArgumentError) { Rackbench::Stats.run_noise([0.1]) }
  end
end
