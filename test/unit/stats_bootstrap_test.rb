# frozen_string_literal: true

require "test_helper"

describe "Rackbench::Stats.bootstrap_ci" do
  let(:stats) { Rackbench::Stats }
  let(:batches) { [10_210.0, 10_050.0, 9_980.0, 10_400.0, 10_120.0, 9_870.0, 10_330.0, 10_060.0, 10_190.0, 9_940.0] }

  # Box-Muller from a seeded generator: normal samples that never change.
  def normal_sample(rng, mean, sd, n)
    Array.new(n) { mean + sd * Math.sqrt(-2 * Math.log(1 - rng.rand)) * Math.cos(2 * Math::PI * rng.rand) }
  end

  it "gives the same interval for the same seed, another for another seed" do
    first = stats.bootstrap_ci(batches, seed: 42)
    assert_equal first, stats.bootstrap_ci(batches, seed: 42)
    refute_equal first, stats.bootstrap_ci(batches, seed: 43, statistic: :mean)
    assert_equal stats.bootstrap_ci(batches, statistic: :mean, seed: 5),
                 stats.bootstrap_ci(batches, statistic: :mean, seed: 5)
  end

  it "does not touch the global generator" do
    srand(9)
    expected = rand
    srand(9)
    stats.bootstrap_ci(batches)
    assert_equal expected, rand
  end

  it "brackets the sample median, inside the sample's range" do
    low, high = stats.bootstrap_ci(batches)
    median = stats.median(batches)
    assert_operator low, :<=, median
    assert_operator high, :>=, median
    assert_operator low, :>=, batches.min
    assert_operator high, :<=, batches.max
    assert_operator low, :<, high
  end

  it "approaches mean +- 1.96 s / sqrt(n) for the mean of a large normal sample" do
    xs = normal_sample(Random.new(2024), 100.0, 10.0, 400)
    s = stats.summary(xs)
    half_width = 1.959964 * s.stddev / Math.sqrt(xs.size) # about 1
    low, high = stats.bootstrap_ci(xs, statistic: :mean, resamples: 4000, seed: 3)
    assert_in_delta s.mean - half_width, low, 0.1 * half_width
    assert_in_delta s.mean + half_width, high, 0.1 * half_width
  end

  it "narrows as confidence drops" do
    wide = stats.bootstrap_ci(batches, confidence: 0.99)
    narrow = stats.bootstrap_ci(batches, confidence: 0.5)
    assert_operator wide[1] - wide[0], :>, narrow[1] - narrow[0]
  end

  it "is nil below two values and a point for constant ones" do
    assert_nil stats.bootstrap_ci([])
    assert_nil stats.bootstrap_ci([5.0])
    assert_equal [7.0, 7.0], stats.bootstrap_ci([7, 7, 7], statistic: :mean)
  end

  # The definition, drawn the slow way: each resample's indexes drawn,
  # its values sorted, its median taken.
  def definition_medians(values, resamples, rng)
    Array.new(resamples) do
      resample = Array.new(values.size) { values[rng.rand(values.size)] }
      stats.median(resample)
    end
  end

  it "draws what drawing indexes and sorting each resample would, ranks kept across values of one size" do
    sorted = batches.sort
    other = batches.map { |v| (v * 1.7) + 3.0 }.sort
    assert_equal definition_medians(sorted, 500, Random.new(11)),
                 stats::Bootstrap.medians(sorted, 500, Random.new(11))
    # The kept ranks of a first bootstrap serve a second of the same size
    # and seed: the same interval as the definition's draws on its values.
    stats.bootstrap_ci(batches, resamples: 700, seed: 11)
    expected = stats::Bootstrap.percentile_interval(definition_medians(other, 700, Random.new(11)), 0.95)
    assert_equal expected, stats.bootstrap_ci(other, resamples: 700, seed: 11)
    # compare: one generator, the baseline's resamples then the candidate's.
    rng = Random.new(5)
    base = definition_medians(sorted, 600, rng)
    cand = definition_medians(other.first(7), 600, rng)
    ratios = cand.each_with_index.map { |c, i| c / base[i] }
    assert_equal stats::Bootstrap.percentile_interval(ratios, 0.9),
                 stats::Comparing.ratio_ci(batches, other.first(7).shuffle(random: Random.new(1)), 0.9, 600, 5)
  end

  it "rejects bad options, naming them" do
    assert_match(/statistic/, assert_raises(ArgumentError) { stats.bootstrap_ci(batches, statistic: :mode) }.message)
    assert_match(/confidence/, assert_raises(ArgumentError) { stats.bootstrap_ci(batches, confidence: 95) }.message)
    assert_match(/resamples/, assert_raises(ArgumentError) { stats.bootstrap_ci(batches, resamples: 0) }.message)
    assert_match(/seed/, assert_raises(ArgumentError) { stats.bootstrap_ci(batches, seed: "x") }.message)
  end
end
