# frozen_string_literal: true

require "test_helper"
require "support/bisect_oracle"

# The bisection's search over a model of measured commits: every shape the
# issue's proofs take (one step, a skipped build, two steps, no step), in
# milliseconds; the real runs are integration tests and doc/performance.md.
describe Rackbench::Bisect::Search do

  def settings(threshold: 0.01, min_step: nil, min_batches: 5, max_batches: 10)
    Rackbench::Bisect::Settings.build(good: "g", bad: "b", default_measure: "instructions", threshold: threshold,
                                      min_step: min_step, min_batches: min_batches, max_batches: max_batches)
  end

  def search(oracle, size, **options)
    splits = []
    outcome = Rackbench::Bisect::Search.new(size: size, settings: settings(**options), oracle: oracle,
                         on_split: ->(*split) { splits << split }).run
    [outcome, splits]
  end

  it "names the commit of one step, measuring log2(N) commits between the ends, and no commit twice" do
    # The release (0) and 24 commits on top; commit 17 costs 1%, commit 9's build fails.
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(25, { 17 => 0.01 }), unmeasurable: { 9 => "make failed" })
    outcome, splits = search(oracle, 25)
    assert_equal Rackbench::Bisect::Search::FOUND, outcome.status
    assert_equal [[16, 17, []]], outcome.steps.map(&:to_a)
    assert_equal [0, 24, 12, 18, 15, 16, 17], oracle.measured
    assert_operator oracle.measured.size, :<=, Math.log2(24) + 3
    assert_equal [12, 18, 15, 16, 17], splits.map { |s| s[1] }
    assert_empty outcome.set_aside, "commit 9 lies off the search's path: never built"
  end

  it "skips a commit that cannot be measured and names it beside the step it hides" do
    # The build of the middle commit fails: the search measures its neighbour.
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(25, { 17 => 0.01 }), unmeasurable: { 12 => "make failed", 16 => "boot failed" })
    outcome, = search(oracle, 25)
    assert_equal Rackbench::Bisect::Search::FOUND, outcome.status
    assert_equal({ 12 => "make failed", 16 => "boot failed" }, outcome.set_aside.transform_values(&:reason))
    assert_equal ["skipped"], outcome.set_aside.values.map(&:status).uniq
    step = outcome.steps.first
    assert_equal [15, 17, [16]], step.to_a, "16 could not be built: the first bad commit is 16 or 17"
    refute step.exact?
    refute_includes oracle.measured, 12
  end

  it "finds a 2% step among 64 commits in log2(64) splits" do
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(65, { 40 => 0.02 }), noise: 0.002)
    outcome, splits = search(oracle, 65)
    assert_equal [[39, 40, []]], outcome.steps.map(&:to_a)
    assert_equal 6, splits.size
    assert_equal 8, oracle.measured.size
  end

  it "reports both steps of a change made of two, each half of it" do
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(33, { 10 => 0.006, 20 => 0.006 }))
    outcome, = search(oracle, 33, threshold: 0.01)
    assert_equal Rackbench::Bisect::Search::FOUND, outcome.status
    assert_equal [[9, 10, []], [19, 20, []]], outcome.steps.map(&:to_a)
    assert_empty outcome.spreads
  end

  it "stops after the ends when good and bad do not differ by the threshold" do
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(64, { 30 => 0.002 }))
    outcome, splits = search(oracle, 64)
    assert_equal Rackbench::Bisect::Search::NO_STEP, outcome.status
    assert_equal [0, 63], oracle.measured
    assert_empty splits
  end

  it "adds batches to a comparison that cannot say, up to the most, then stops: cannot say" do
    # 1% change, noise 3% at one batch: ±1.3% at 5 batches, still ±0.95% at 10.
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(8, { 5 => 0.01 }), noise: 0.03)
    outcome, = search(oracle, 8, threshold: 0.005)
    assert_equal Rackbench::Bisect::Search::CANNOT_SAY, outcome.status
    assert_equal [10, 10], [oracle.batches(0), oracle.batches(7)], "one batch at a time on each side, to the cap"
    assert_equal [[0, 7, 0.005]] * 6, oracle.asked, "asked at 5, 6, ... 10 batches"
  end

  it "decides with the batches a noisy comparison needs" do
    # A 3% step with a margin of 4% at one batch (1.8% at 5): the ends need
    # more than 5 batches to say it is worse than 1%.
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(8, { 5 => 0.03 }), noise: 0.04)
    outcome, = search(oracle, 8, threshold: 0.01, min_step: 0.01)
    assert_equal Rackbench::Bisect::Search::FOUND, outcome.status
    assert_equal [[4, 5, []]], outcome.steps.map(&:to_a)
    assert_operator oracle.batches(0), :>, 5
  end

  it "says the change is spread when no commit between the ends makes a step of min_step" do
    # The figure creeps by 0.2% a commit: 1.6% from end to end, 0.8% on
    # either side of commit 4: no step of 1%.
    values = Rackbench::Test::BisectOracle.history(9, (1..8).to_h { |i| [i, 0.002] })
    outcome, = search(Rackbench::Test::BisectOracle.new(values), 9, threshold: 0.015, min_step: 0.01)
    assert_equal Rackbench::Bisect::Search::SPREAD, outcome.status
    assert_empty outcome.steps
    assert_equal [[0, 8]], outcome.spreads.map(&:to_a)
  end

  it "stops in one line when an end cannot be measured" do
    oracle = Rackbench::Test::BisectOracle.new(Rackbench::Test::BisectOracle.history(10, { 5 => 0.02 }), unmeasurable: { 0 => "app check failed: GET / answered 500" })
    outcome, = search(oracle, 10)
    assert_equal Rackbench::Bisect::Search::UNMEASURABLE, outcome.status
    assert_equal "the good commit cannot be measured: app check failed: GET / answered 500", outcome.reason
  end

  it "treats a commit that fails in an added batch as one whose comparisons cannot say" do
    values = Rackbench::Test::BisectOracle.history(9, { 6 => 0.02 })
    oracle = Rackbench::Test::BisectOracle.new(values, noise: 0.05, fails_later: { 4 => 6 })
    outcome, = search(oracle, 9, threshold: 0.01, min_step: 0.01, max_batches: 40)
    assert_equal Rackbench::Bisect::Search::FOUND, outcome.status
    assert_equal [[5, 6, []]], outcome.steps.map(&:to_a)
    assert_equal Rackbench::Bisect::Search::CANNOT_SAY, outcome.set_aside.fetch(4).status
  end
end
