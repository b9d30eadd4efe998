# frozen_string_literal: true

require "test_helper"

# Stats.change_points (a history's change points over runs' intervals) and
# the family's confidence of a gate (Stats.family_confidence, resamples).
describe "Rackbench::Stats.change_points" do
  def points(intervals, equivalence: 0.01)
    Rackbench::Stats.change_points(intervals, equivalence: equivalence).map { |c| [c.index, c.runs, c.direction, c.band] }
  end

  it "marks the first run whose interval leaves the band of the runs before it, and starts a new band there" do
    series = [[99, 101], [98, 102], [99.5, 100.5], [88, 90], [87, 91], [88.5, 89.5], [99, 101]]
    assert_equal [[3, [0, 1, 2], "down", [98.0, 102.0]], [6, [3, 4, 5], "up", [87.0, 91.0]]], points(series)
  end

  it "needs the interval wholly outside the band widened by the equivalence band" do
    assert_equal [], points([[99, 101], [96, 98.5]], equivalence: 0.01), "98.5 is within 1% of 99"
    assert_equal [[1, [0], "down", [99.0, 101.0]]], points([[99, 101], [96, 98.5]], equivalence: 0.0)
    assert_equal [], points([[99, 101], [100.5, 102], [101.5, 103], [102.5, 104]]), "a drift inside the growing band"
  end

  it "skips runs without an interval, which neither move a band nor start one" do
    assert_equal [[3, [0, 2], "up", [99.0, 101.0]]], points([[99, 101], nil, [99.5, 100.5], [110, 112]])
    assert_equal [], points([nil, nil, [1, 2]])
    assert_equal [], points([])
  end

  it "refuses intervals that are not [low, high]" do
    assert_raises(ArgumentError) { points([[2, 1]]) }
    assert_raises(ArgumentError) { points([[1, Float::NAN]]) }
    assert_raises(ArgumentError) { Rackbench::Stats.change_points([[1, 2]], equivalence: 0.9) }
  end
end

describe "Rackbench::Stats.family_confidence" do
  it "divides what the confidence leaves out among the comparisons (Bonferroni)" do
    assert_in_delta 0.95, Rackbench::Stats.family_confidence(0.95, 1), 1e-12
    assert_in_delta 0.99, Rackbench::Stats.family_confidence(0.95, 5), 1e-12
    assert_in_delta 0.999, Rackbench::Stats.family_confidence(0.95, 50), 1e-12
    assert_raises(ArgumentError) { Rackbench::Stats.family_confidence(0.95, 0) }
    assert_raises(ArgumentError) { Rackbench::Stats.family_confidence(1.5, 2) }
  end

  it "asks for enough resamples that each tail of the interval holds 10 draws, within bounds" do
    assert_equal 10_000, Rackbench::Stats.family_resamples(0.95, 10_000)
    assert_equal 20_000, Rackbench::Stats.family_resamples(0.999, 10_000)
    assert_equal 100_000, Rackbench::Stats.family_resamples(0.99999, 10_000)
    assert_equal 200_000, Rackbench::Stats.family_resamples(0.95, 200_000), "never fewer than asked"
  end
end
