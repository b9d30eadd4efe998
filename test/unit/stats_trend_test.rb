# frozen_string_literal: true

require "test_helper"

describe "Rackbench::Stats.trend" do
  let(:stats) { Rackbench::Stats }

  # 20 measured seconds around level with +-noise (a seeded uniform), then
  # the partial drain second.
  def window(level:, rise_per_s: 0.0, noise: 0.0, seed: 1)
    rng = Random.new(seed)
    Array.new(20) { |s| level + rise_per_s * s + noise * level * (2 * rng.rand - 1) } + [level / 3]
  end

  it "calls a ramp rising, with its slope and size" do
    t = stats.trend(window(level: 1000, rise_per_s: 5, noise: 0.005))
    assert t.rising
    assert_in_delta 5.0, t.slope_per_s, 0.5
    assert_in_delta 5.0 * 19 / 1050, t.relative_rise, 0.01
    assert_operator t.p_value, :<, 0.001
    assert_match(/\Astill rising: fitted change \+9\.\d% over 19 s/, t.reason)
  end

  it "does not call flat noise rising" do
    (1..5).each do |seed|
      t = stats.trend(window(level: 1000, noise: 0.02, seed: seed))
      refute t.rising, t.reason
      assert_operator t.relative_rise.abs, :<, 0.02
    end
  end

  it "does not call a significant but small creep rising" do
    t = stats.trend(window(level: 10_000, rise_per_s: 1)) # 0.19% over the window
    assert_operator t.p_value, :<, 0.05
    refute t.rising
    assert_match(/under the 2% that counts/, t.reason)
    assert stats.trend(window(level: 10_000, rise_per_s: 1), min_rise: 0.001).rising
  end

  it "ignores the last, partial second" do
    flat = [1000] * 10
    refute stats.trend(flat + [5000]).rising
    t = stats.trend(flat + [10])
    assert_equal 0.0, t.slope_per_s
    assert_equal 1.0, t.p_value # all ties: no trend at all
  end

  it "needs 5 full seconds, and says so" do
    t = stats.trend([100, 200, 300, 400, 500]) # 4 once the last is dropped
    refute t.rising
    assert_nil t.slope_per_s
    assert_nil t.relative_rise
    assert_match(/4 full seconds measured.*at least 5/, t.reason)
    assert_match(/0 full seconds/, stats.trend([]).reason)
    assert stats.trend([100, 200, 300, 400, 500, 600]).rising
  end

  it "fits the Theil-Sen slope through a wild point" do
    t = stats.trend([5, 7, 9, 11, 100, 15, 17, 0]) # y = 2x + 5, one wild second, drain
    assert_equal 2.0, t.slope_per_s
  end

  it "gives the Mann-Kendall p-value of a known sequence" do
    # strictly rising, n = 10: S = 45, Var(S) = 10 * 9 * 25 / 18 = 125, Z = (45 - 1) / sqrt(125)
    t = stats.trend((1..10).to_a + [0])
    assert_in_delta 1 - stats.normal_cdf(44 / Math.sqrt(125)), t.p_value, 1e-12
    assert_in_delta 4.15e-5, t.p_value, 1e-6
  end

  it "reports a window without requests as not rising" do
    t = stats.trend([0] * 8)
    refute t.rising
    assert_match(/no requests/, t.reason)
  end

  it "rejects bad input" do
    assert_raises(ArgumentError) { stats.trend([1, nil, 3]) }
    assert_raises(ArgumentError) { stats.trend([1, 2, 3], min_rise: -0.1) }
  end
end
