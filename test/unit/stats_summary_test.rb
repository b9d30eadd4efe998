# frozen_string_literal: true

require "test_helper"

describe "Rackbench::Stats.summary" do
  let(:stats) { Rackbench::Stats }

  it "gives the textbook figures of a small data set" do
    # mean 5, population sd 2 (the classic example); sample sd sqrt(32 / 7)
    s = stats.summary([2, 4, 4, 4, 5, 5, 7, 9])
    assert_equal 8, s.n
    assert_equal 5.0, s.mean
    assert_equal 4.5, s.median
    assert_in_delta Math.sqrt(32.0 / 7), s.stddev, 1e-12
    assert_equal 0.5, s.mad # |x - 4.5|: 2.5 .5 .5 .5 .5 .5 2.5 4.5
    assert_equal [2.0, 9.0], [s.min, s.max]
    assert_in_delta Math.sqrt(32.0 / 7) / 5, s.cv, 1e-12
  end

  it "leaves what one value cannot say nil, and everything nil for none" do
    one = stats.summary([3])
    assert_equal [1, 3.0, 3.0, 0.0], [one.n, one.mean, one.median, one.mad]
    assert_nil one.stddev
    assert_nil one.cv
    empty = stats.summary([])
    assert_equal 0, empty.n
    assert_equal [nil] * 7, empty.to_h.except(:n).values
  end

  it "has no CV when the mean is zero" do
    assert_nil stats.summary([-1, 1]).cv
  end

  it "rejects what is not a list of finite numbers, naming it" do
    assert_raises(ArgumentError) { stats.summary(nil) }
    assert_match(/finite numbers.*"12"/, assert_raises(ArgumentError) { stats.summary([1, "12"]) }.message)
    assert_match(/NaN/, assert_raises(ArgumentError) { stats.summary([1, Float::NAN]) }.message)
  end
end

describe "Rackbench::Stats.quantile" do
  let(:stats) { Rackbench::Stats }

  it "interpolates between order statistics like R's default (type 7)" do
    sorted = (1..10).to_a
    # R: quantile(1:10, c(0, .1, .25, .5, .9, 1)) -> 1 1.9 3.25 5.5 9.1 10
    assert_equal [1.0, 1.9, 3.25, 5.5, 9.1, 10.0].map { |v| v.round(9) },
                 [0, 0.1, 0.25, 0.5, 0.9, 1].map { |q| stats.quantile(sorted, q).round(9) }
    assert_nil stats.quantile([], 0.5)
    assert_equal 7.0, stats.quantile([7], 0.3)
    assert_raises(ArgumentError) { stats.quantile(sorted, 1.5) }
  end

  it "gives the median and MAD of unsorted values" do
    assert_equal 3.0, stats.median([5, 1, 3])
    assert_equal 2.5, stats.median([4, 1, 3, 2])
    assert_equal 1.0, stats.mad([1, 2, 3, 4, 100])
    assert_nil stats.mad([])
  end
end

describe "Rackbench::Stats normal distribution" do
  let(:stats) { Rackbench::Stats }

  it "inverts the normal CDF at known points" do
    { 0.975 => 1.959964, 0.95 => 1.644854, 0.8 => 0.841621, 0.995 => 2.575829, 0.5 => 0.0,
      0.025 => -1.959964, 1e-10 => -6.361341 }.each do |p, z|
      assert_in_delta z, stats.normal_quantile(p), 1e-6, "quantile(#{p})"
    end
    assert_equal(-Float::INFINITY, stats.normal_quantile(0))
    assert_equal Float::INFINITY, stats.normal_quantile(1)
  end

  it "is the inverse of the CDF to full precision, tails included" do
    [1e-12, 1e-6, 0.01, 0.3, 0.6, 0.9, 0.999].each do |p|
      assert_in_delta 1.0, stats.normal_cdf(stats.normal_quantile(p)) / p, 1e-12, "p = #{p}"
    end
    assert_in_delta 0.975, stats.normal_cdf(1.959963984540054), 1e-15
  end

  it "rejects a probability outside [0, 1]" do
    [-0.1, 1.1, nil, "0.5"].each { |p| assert_raises(ArgumentError) { stats.normal_quantile(p) } }
  end
end
