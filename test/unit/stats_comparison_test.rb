# frozen_string_literal: true

require "test_helper"

describe "Rackbench::Stats.compare" do
  let(:stats) { Rackbench::Stats }

  # Box-Muller from a seeded generator: normal samples that never change.
  def normal_sample(rng, mean, sd, n)
    Array.new(n) { mean + sd * Math.sqrt(-2 * Math.log(1 - rng.rand)) * Math.cos(2 * Math::PI * rng.rand) }
  end

  # Two fake configurations over 20 batches with 2% noise, the candidate
  # `difference` faster (the issue's synthetic test).
  def configurations(seed, difference)
    rng = Random.new(seed)
    [normal_sample(rng, 10_000.0, 200.0, 20), normal_sample(rng, 10_000.0 * (1 + difference), 200.0 * (1 + difference), 20)]
  end

  it "finds a known 3% difference under 2% noise: faster, and the reverse slower" do
    baseline, candidate = configurations(1, 0.03)
    result = stats.compare(baseline, candidate)
    assert_equal "faster", result.verdict
    assert_in_delta stats.median(candidate) / stats.median(baseline), result.ratio, 1e-12
    low, high = result.ratio_ci
    assert_operator low, :>, 1.0
    assert_operator low, :<=, result.ratio
    assert_operator high, :>=, result.ratio
    assert_nil result.batches_needed
    assert_match(/\ACI 1\.\d{3}-1\.\d{3} above 1\z/, result.explanation)

    reverse = stats.compare(candidate, baseline)
    assert_equal "slower", reverse.verdict
    assert_operator reverse.ratio_ci[1], :<, 1.0
    assert_match(/below 1/, reverse.explanation)
  end

  it "finds the 3% difference for most seeds and never the opposite" do
    verdicts = (1..10).map { |seed| stats.compare(*configurations(seed, 0.03), resamples: 2000).verdict }
    assert_operator verdicts.count("faster"), :>=, 8, verdicts.inspect
    refute_includes verdicts, "slower"
  end

  it "detects no difference between identical configurations and says how many batches would" do
    baseline, candidate = configurations(3, 0.0)
    result = stats.compare(baseline, candidate)
    assert_equal "no difference detected", result.verdict
    assert_match(/\ACI 0\.\d{3}-1\.\d{3} spans 1\z/, result.explanation)
    assert_kind_of Integer, result.batches_needed
    pooled = Math.sqrt((stats.robust_cv(baseline)**2 + stats.robust_cv(candidate)**2) / 2)
    assert_equal stats.batches_needed(cv: pooled, detect: 0.01), result.batches_needed
    # the formula at the generated CV (2%): pi * 0.02^2 * (1.96 + 0.8416)^2 / 0.01^2 = 98.6
    generated = stats.batches_needed(cv: 0.02, detect: 0.01)
    assert_equal 99, generated
    assert_includes (generated / 2)..(generated * 2), result.batches_needed
    assert_operator stats.compare(baseline, candidate, detect: 0.05).batches_needed, :<, result.batches_needed
  end

  it "calls a CI inside the equivalence band no difference, and outside it faster" do
    baseline = [1000.0, 1000.5, 999.5, 1000.2, 999.8, 1000.1]
    candidate = baseline.map { |x| x * 1.003 } # 0.3% faster, almost no noise
    inside = stats.compare(baseline, candidate)
    assert_operator inside.ratio_ci[0], :>, 1.0
    assert_equal "no difference detected", inside.verdict
    assert_match(/within the ±1% equivalence band/, inside.explanation)
    assert_kind_of Integer, inside.batches_needed
    assert_equal "faster", stats.compare(baseline, candidate, equivalence: 0.001).verdict
    assert_equal "faster", stats.compare(baseline, candidate, equivalence: 0).verdict
  end

  it "needs two batches a side, and still gives the ratio of one" do
    one = stats.compare([1000], [1000, 1010])
    assert_equal "too few batches", one.verdict
    assert_equal 1.005, one.ratio
    assert_nil one.ratio_ci
    assert_nil one.batches_needed
    assert_equal "baseline has 1 batch; a CI needs at least 2 per side", one.explanation
    none = stats.compare([1000, 1001], [])
    assert_equal "too few batches", none.verdict
    assert_nil none.ratio
    assert_match(/candidate has 0 batches/, none.explanation)
  end

  it "is deterministic for a seed" do
    baseline, candidate = configurations(4, 0.01)
    assert_equal stats.compare(baseline, candidate, seed: 7), stats.compare(baseline, candidate, seed: 7)
  end

  it "rejects throughputs that are not positive, and bad options" do
    assert_match(/baseline throughputs must be positive, got 0/,
                 assert_raises(ArgumentError) { stats.compare([1, 0], [1, 2]) }.message)
    assert_raises(ArgumentError) { stats.compare([1, 2], [1, Float::INFINITY]) }
    assert_match(/equivalence/, assert_raises(ArgumentError) { stats.compare([1, 2], [1, 2], equivalence: -1) }.message)
  end
end

describe "Rackbench::Stats.batches_needed" do
  let(:stats) { Rackbench::Stats }

  it "follows n = (pi / 2) * 2 cv^2 (z(1 - alpha / 2) + z(power))^2 / detect^2, at least 2" do
    z = 1.959964 + 0.841621
    assert_equal (Math::PI * 0.01**2 * z**2 / 0.01**2).ceil, stats.batches_needed(cv: 0.01) # 24.66 -> 25
    assert_equal 25, stats.batches_needed(cv: 0.01)
    assert_equal 99, stats.batches_needed(cv: 0.02, detect: 0.01)
    assert_equal 2, stats.batches_needed(cv: 0.0)
    assert_equal 2, stats.batches_needed(cv: 0.001)
    assert_operator stats.batches_needed(cv: 0.02, confidence: 0.99), :>, 99
    assert_operator stats.batches_needed(cv: 0.02, power: 0.9), :>, 99
    assert_raises(ArgumentError) { stats.batches_needed(cv: -1) }
    assert_raises(ArgumentError) { stats.batches_needed(cv: 0.02, detect: 0) }
  end

  it "measures noise with a robust CV that one wild batch does not inflate" do
    tight = [1000, 1010, 990, 1005, 995, 1002, 998]
    assert_in_delta 1.4826 * 5 / 1000.0, stats.robust_cv(tight), 1e-12
    wild = tight[0..-2] + [3000]
    assert_operator stats.robust_cv(wild), :<, 0.011 # MAD 7 around 1002
    assert_operator stats.summary(wild).cv, :>, 0.5
    assert_in_delta stats.summary([5, 5, 5, 8]).cv, stats.robust_cv([5, 5, 5, 8]), 1e-12 # MAD 0: classical CV
    assert_nil stats.robust_cv([5])
  end
end
