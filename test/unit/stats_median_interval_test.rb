# frozen_string_literal: true

require "test_helper"

# Stats.median_interval: the percentile bootstrap interval of a median,
# computed from its exact law instead of drawn resamples.
describe "Rackbench::Stats.median_interval" do
  let(:stats) { Rackbench::Stats }

  def sample(n, seed)
    random = Random.new(seed)
    Array.new(n) { 100 + 10 * random.rand }
  end

  it "gives the interval the drawn bootstrap settles on, for odd and even counts of batches" do
    # The drawn interval's ends are quantiles of 40,000 draws: each lies
    # where the exact law's cumulative probability is the tail's, give or
    # take the draws' own error (0.002 at 5%; 0.005 allowed).
    [3, 4, 5, 8, 11].each do |n|
      values = sample(n, n)
      law = n.odd? ? stats::MedianLaw.odd(values.sort) : stats::MedianLaw.even(values.sort)
      drawn = stats.bootstrap_ci(values, statistic: :median, confidence: 0.9, resamples: 40_000, seed: 3)
      exact = stats.median_interval(values, confidence: 0.9)
      [[0, 0.05], [1, 0.95]].each do |end_index, tail|
        within = [stats::MedianLaw.quantile(law, tail - 0.005), stats::MedianLaw.quantile(law, tail + 0.005)]
        assert_operator drawn[end_index], :>=, within[0] - 1e-9, "#{n} batches"
        assert_operator drawn[end_index], :<=, within[1] + 1e-9, "#{n} batches"
        assert_includes within[0]..within[1], exact[end_index]
      end
    end
  end

  it "is the range of 5 batches at 95% (the median is the lowest batch with probability 5.8%)" do
    assert_equal [98.0, 102.0], stats.median_interval([100, 102, 98, 101, 99], confidence: 0.95)
    law = stats::MedianLaw.odd([98.0, 99.0, 100.0, 101.0, 102.0])
    assert_in_delta 0.05792, law.first.last, 1e-5
  end

  it "is a law: the probabilities of every count of batches add up to 1" do
    (2..30).each do |n|
      values = sample(n, 100 + n).sort
      law = n.odd? ? stats::MedianLaw.odd(values) : stats::MedianLaw.even(values)
      assert_in_delta 1.0, law.sum(&:last), 1e-9, "#{n} batches"
      assert(law.all? { |_, p| p >= -1e-12 }, "#{n} batches: a negative probability")
    end
  end

  it "lies within the batches, ignores their order, and needs two of them" do
    values = sample(9, 7)
    low, high = stats.median_interval(values)
    assert_operator low, :>=, values.min
    assert_operator high, :<=, values.max
    assert_equal [low, high], stats.median_interval(values.reverse)
    assert_nil stats.median_interval([1.0])
    assert_raises(ArgumentError) { stats.median_interval([1.0, Float::NAN]) }
  end
end
