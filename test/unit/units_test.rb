# frozen_string_literal: true

require "test_helper"

describe Rackbench::Units do
  let(:units) { Rackbench::Units }

  it "writes latencies in the unit of their size" do
    assert_equal "512.0us", units.latency_us(512)
    assert_equal "999.9us", units.latency_us(999.9)
    assert_equal "1.00ms", units.latency_us(1000)
    assert_equal "1.50ms", units.latency_us(1500)
    assert_equal "2.00s", units.latency_us(2_000_000)
  end

  it "writes durations in seconds and sizes with binary prefixes" do
    assert_equal "2.50s", units.seconds(2.5)
    assert_equal "2.5s", units.seconds(2.5, digits: 1)
    assert_equal "512B", units.bytes(512)
    assert_equal "1023B", units.bytes(1023)
    assert_equal "1.50KB", units.bytes(1536)
    assert_equal "3.00MB", units.bytes(3 * 2**20)
    assert_equal "2048.00TB", units.bytes(2048 * 2**40), "no prefix past TB"
  end

  it "writes memory in decimal megabytes, with or without the unit" do
    assert_equal "30.0 MB", units.megabytes(30_000_000)
    assert_equal "419.4", units.megabytes(419_430_400, unit: false)
  end

  it "writes rates with one decimal, rounded from 100 up, or grouped by thousands" do
    assert_equal "1510.0", units.rate(1510)
    assert_equal "1200", units.rate_rounded(1200.4)
    assert_equal "99.5", units.rate_rounded(99.54)
    assert_equal "3,985", units.rate_grouped(3984.7)
    assert_equal "1,234,568", units.rate_grouped(1_234_567.8)
    assert_equal "999", units.rate_grouped(999.2)
  end

  it "writes ratios, percentages and intervals" do
    assert_equal "1.200", units.ratio(1.2)
    assert_equal "1.20%", units.percent(0.012)
    assert_equal "0.8%", units.percent(0.0079, digits: 1)
    assert_equal "1%", units.percent_trimmed(0.01)
    assert_equal "0.5%", units.percent_trimmed(0.005)
    assert_equal "95%", units.percent_trimmed(0.95, digits: 0)
    assert_equal "1.0%", units.percent_rounded(0.01)
    assert_equal "1.25%", units.percent_rounded(0.0125)
    assert_equal "3945.4 – 4005.0", units.interval([3945.4, 4005.0], :rate)
    assert_equal "1.184–1.216", units.interval([1.1840796, 1.2160804], :ratio, separator: "–")
    assert_equal "±1.0%", units.relative_interval([990.0, 1010.0], 1000.0)
    assert_equal "14", units.integer(14)
  end

  it "writes every unknown figure as -" do
    formatters = %i[latency_us seconds bytes megabytes rate rate_rounded rate_grouped ratio percent percent_trimmed
                    percent_rounded integer]
    formatters.each { |name| assert_equal "-", units.public_send(name, nil), name.to_s }
    assert_equal "-", units.interval(nil, :rate)
    assert_equal "-", units.interval([1.0, nil], :rate)
    assert_equal "-", units.relative_interval(nil, 1000.0)
    assert_equal "-", units.relative_interval([990.0, 1010.0], nil)
    assert_equal "-", units.relative_interval([990.0, 1010.0], 0.0)
  end
end
