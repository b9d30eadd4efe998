# frozen_string_literal: true

require "test_helper"

describe Rackbench::Stats::Memo do
  it "computes an answer once per key, hands out copies, and forgets the oldest past its size" do
    memo = Rackbench::Stats::Memo.new(2)
    calls = 0
    values = [1.0, 2.0]
    first = memo.fetch([:ci, values, 7]) { calls += 1; [0.5, 1.5] }
    first << :changed
    values << 3.0
    assert_equal [0.5, 1.5], memo.fetch([:ci, [1.0, 2.0], 7]) { calls += 1; [9.0, 9.0] }, "kept, unchanged by callers"
    assert_equal 1, calls
    memo.fetch([:ci, [1.0], 7]) { [0.0, 0.0] }
    memo.fetch([:ci, [2.0], 7]) { [0.0, 0.0] }
    assert_equal [9.0, 9.0], memo.fetch([:ci, [1.0, 2.0], 7]) { calls += 1; [9.0, 9.0] }, "the oldest went"
    assert_equal 2, calls
    assert_nil memo.fetch([:none]) { nil }
  end

  it "gives the bootstrap's interval as computing it afresh would" do
    values = [100.0, 103.0, 98.0, 101.0, 99.5, 102.0]
    fresh = Rackbench::Stats::Bootstrap.percentile_interval(
      Rackbench::Stats::Bootstrap.distribution(values.sort, :median, 10_000, Random.new(3)), 0.95
    )
    assert_equal fresh, Rackbench::Stats.bootstrap_ci(values, seed: 3)
    assert_equal fresh, Rackbench::Stats.bootstrap_ci(values, seed: 3)
  end
end
