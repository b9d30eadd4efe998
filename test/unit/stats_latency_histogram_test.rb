# frozen_string_literal: true

require "test_helper"
require "json"

describe Rackbench::Stats::LatencyHistogram do
  let(:histogram_class) { Rackbench::Stats::LatencyHistogram }

  # [low, high) of the bucket holding value_ns, as ext/rackbench_engine/histogram.c
  # places it: exact below 256, then 128 equal buckets per power of two.
  def bucket_of(value_ns)
    shift = [(value_ns | 128).bit_length - 8, 0].max
    low = (value_ns >> shift) << shift
    [low, low + (1 << shift)]
  end

  # The engine's histogram object for these values (ns), built independently
  # of the class under test; mean and m2 from exact Rationals.
  def engine_histogram(values_ns)
    counts = values_ns.map { |v| bucket_of(v) }.tally
    mean = values_ns.sum.to_r / [values_ns.size, 1].max
    { "scheme" => "log-linear", "unit" => "ns", "sub_bucket_bits" => 7, "total" => values_ns.size,
      "min_ns" => values_ns.min || 0, "max_ns" => values_ns.max || 0, "mean_ns" => mean.to_f,
      "m2_ns2" => values_ns.sum { |v| (v - mean)**2 }.to_f,
      "buckets" => counts.keys.sort.map { |low, high| [low, high, counts[[low, high]]] } }
  end

  # Latencies from 100 ns to ~50 ms, a long tail, a few exact small ones.
  def latencies_ns(seed, n)
    rng = Random.new(seed)
    Array.new(n) { (80_000 * Math.exp(1.2 * Math.sqrt(-2 * Math.log(1 - rng.rand)) * Math.cos(2 * Math::PI * rng.rand))).round } +
      [100, 200, 255, 256, 50_000_000]
  end

  # The engine's rule from the values themselves: the nearest-rank value's
  # bucket midpoint, clamped to [min, max].
  def expected_percentile_ns(values_ns, pct)
    sorted = values_ns.sort
    rank = (Rational(pct) * sorted.size / 100).ceil.clamp(1, sorted.size)
    low, high = bucket_of(sorted[rank - 1])
    (low + (high - low) / 2).clamp(sorted.first, sorted.last)
  end

  it "reproduces the engine's own latency figures from its histogram" do
    doc = JSON.parse(File.read(File.expand_path("../fixtures/engine_result.json", __dir__)))
    h = histogram_class.new(doc["histogram"])
    lat = doc["latency_us"]
    got = h.percentiles_us
    assert_equal [lat["p50"], lat["p90"], lat["p99"], lat["p99_9"], lat["max"]],
                 got.values_at("p50", "p90", "p99", "p99.9", "max").map { |us| us.round(3) }
    assert_equal [lat["min"], lat["mean"], lat["stdev"]], [h.min_us, h.mean_us, h.stddev_us].map { |us| us.round(3) }
    assert_equal 400, h.count
  end

  it "follows the engine's nearest-rank and midpoint rule on known values" do
    values = latencies_ns(7, 2000)
    h = histogram_class.new(engine_histogram(values))
    %w[0.1 1 12.5 25 50 75 90 99 99.5 99.9 99.95].each do |pct|
      assert_equal expected_percentile_ns(values, pct), h.percentile_ns(pct.to_f), "p#{pct}"
      assert_equal expected_percentile_ns(values, pct) / 1e3, h.percentile_us(pct.to_f)
    end
    assert_equal values.min, h.percentile_ns(0)
    assert_equal 50_000_000, h.percentile_ns(100)
  end

  it "counts exact ranks exactly where floating point would round up" do
    values = (1..1000).map { |i| i * 1000 } # 99.9% of 1000 is rank 999, not 1000
    h = histogram_class.new(engine_histogram(values))
    assert_equal expected_percentile_ns(values, "99.9"), h.percentile_ns(99.9)
    refute_equal h.percentile_ns(100), h.percentile_ns(99.9)
  end

  it "merges batches into exactly the histogram of their union" do
    a = latencies_ns(1, 3000)
    b = latencies_ns(2, 500).map { |v| v * 3 }
    merged = histogram_class.merge([engine_histogram(a), histogram_class.new(engine_histogram(b))])
    union = engine_histogram(a + b)
    assert_equal union.values_at("total", "min_ns", "max_ns", "buckets"),
                 merged.to_h.values_at("total", "min_ns", "max_ns", "buckets")
    assert_in_delta 1.0, merged.mean_ns / union["mean_ns"], 1e-12
    assert_in_delta 1.0, merged.m2_ns2 / union["m2_ns2"], 1e-9
    [50, 99, 99.9].each { |p| assert_equal expected_percentile_ns(a + b, p.to_s), merged.percentile_ns(p) }
  end

  it "merges empty histograms away" do
    values = latencies_ns(3, 100)
    empty = engine_histogram([])
    merged = histogram_class.merge([empty, engine_histogram(values), empty])
    assert_equal engine_histogram(values).except("mean_ns", "m2_ns2"), merged.to_h.except("mean_ns", "m2_ns2")
    nothing = histogram_class.merge([empty])
    assert_equal 0, nothing.count
    assert_nil nothing.percentile_us(50)
    assert_nil nothing.stddev_us
    assert_equal({ "p50" => nil, "max" => nil, "mean" => nil }, nothing.percentiles_us([50]))
    assert_empty nothing.curve_us
  end

  it "refuses to merge histograms whose buckets do not line up" do
    h = engine_histogram([1000, 2000])
    error = assert_raises(ArgumentError) { histogram_class.merge([h, h.merge("sub_bucket_bits" => 8)]) }
    assert_match(/different schemes: log-linear\/7 bits\/ns and log-linear\/8 bits\/ns/, error.message)
    assert_raises(ArgumentError) { histogram_class.merge([h, h.merge("scheme" => "hdr")]) }
    assert_raises(ArgumentError) { histogram_class.merge([]) }
  end

  it "names what is wrong with a malformed histogram" do
    h = engine_histogram([1000, 2000])
    [[h.except("m2_ns2"), /lacks m2_ns2/], [h.merge("unit" => "us"), /unit must be ns/],
     [h.merge("total" => 3), /add up to 2, not its total 3/], [h.merge("buckets" => [[5, 5, 2]]), /low < high/],
     [h.merge("min_ns" => -1), /min_ns must be an Integer/], ["x", /must be a Hash/]].each do |bad, message|
      assert_match message, assert_raises(ArgumentError) { histogram_class.new(bad) }.message
    end
  end

  it "gives a latency-by-percentile curve with only the percentiles the count supports" do
    values = latencies_ns(4, 995) # 1000 values: 99.9 is supported, 99.95 is not
    h = histogram_class.new(engine_histogram(values))
    curve = h.curve_us
    percentiles = curve.map(&:first)
    assert_equal [0.0, 50.0, 75.0], percentiles.first(3)
    assert_includes percentiles, 99.9
    refute_includes percentiles, 99.95
    assert_equal [100.0, 50_000.0], curve.last
    assert_equal curve.map(&:last).sort, curve.map(&:last), "latency never falls as the percentile rises"
    assert_equal [[0.0, h.min_us], [100.0, h.max_us]], h.curve_us([0])
  end

  it "round-trips the engine's shape" do
    hash = engine_histogram(latencies_ns(5, 50))
    assert_equal hash, histogram_class.new(hash).to_h
    assert_equal hash, histogram_class.new(hash.transform_keys(&:to_sym)).to_h
  end

  it "rejects a percentile outside 0..100" do
    h = histogram_class.new(engine_histogram([1000]))
    [-1, 100.5, nil].each { |p| assert_raises(ArgumentError) { h.percentile_us(p) } }
  end
end
