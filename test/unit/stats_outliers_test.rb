# frozen_string_literal: true

require "test_helper"

describe "Rackbench::Stats outliers" do
  let(:stats) { Rackbench::Stats }

  it "computes Iglewicz and Hoaglin's modified z-scores" do
    # median 3, MAD 1: z = 0.6745 * (x - 3)
    expected = [-1.349, -0.6745, 0.0, 0.6745, 65.4265]
    stats.robust_z([1, 2, 3, 4, 100]).zip(expected).each { |got, want| assert_in_delta want, got, 1e-9 }
  end

  it "finds one planted outlier among tight values, by index" do
    batches = [10_120.0, 10_080.0, 10_150.0, 10_100.0, 7_300.0, 10_090.0, 10_130.0, 10_110.0]
    assert_equal [4], stats.outliers(batches)
    assert_equal 8, batches.size, "flagged, never dropped"
  end

  it "flags nothing in constant values, where the MAD is 0" do
    assert_equal [0.0] * 5, stats.robust_z([42] * 5)
    assert_empty stats.outliers([42] * 5)
    assert_empty stats.outliers([])
  end

  it "leaves ordinary spread alone and honours the threshold" do
    values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert_empty stats.outliers(values)
    assert_equal [0, 9], stats.outliers(values, threshold: 1.0) # |z| = 0.6745 * 4.5 / 2.5 = 1.21
    assert_raises(ArgumentError) { stats.outliers(values, threshold: 0) }
  end
end
