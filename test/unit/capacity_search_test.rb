# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/capacity_support"

describe Rackbench::Capacity::Search do
  include Rackbench::Test::CapacitySupport


  it "finds a known ceiling within the resolution: ramp, then bisection" do
    asked = []
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 50, "resolution" => "5%"), &ceiling_steps(385, asked: asked))
    assert_equal :found, result.status
    assert_operator result.rate, :<=, 385
    assert_operator result.first_fail, :>, 385
    assert_operator result.first_fail - result.rate, :<=, 0.05 * result.rate
    assert_equal result.first_fail - result.rate, result.resolution_rps
    assert_equal [[:ramp, 50], [:ramp, 100], [:ramp, 200], [:ramp, 400]], asked.first(4)
    assert(asked.drop(4).all? { |phase, _| phase == :bisect })
    assert(asked.drop(4).all? { |_, rate| rate > 200 && rate < 400 }, "bisection stays between the last pass and the first fail")
  end

  it "resolves to an absolute resolution in req/s" do
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 100, "resolution" => 10), &ceiling_steps(777))
    assert_equal :found, result.status
    assert_operator result.first_fail - result.rate, :<=, 10
    assert_includes (767..777), result.rate
  end

  it "ramps down when the start rate already fails" do
    asked = []
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 1000, "resolution" => "5%"), &ceiling_steps(90, asked: asked))
    assert_equal [[:ramp, 1000], [:ramp, 500], [:ramp, 250], [:ramp, 125], [:ramp, 62]], asked.first(5)
    assert_equal :found, result.status
    assert_includes (86..90), result.rate
  end

  it "says :none when nothing down to 1 req/s holds the target" do
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 8), &ceiling_steps(0))
    assert_equal :none, result.status
    assert_nil result.rate
    assert_match(/fails even at 1 req\/s/, result.note)
  end

  it "stops at max_rate and says the capacity is higher (capped)" do
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 100, "max_rate" => 300), &ceiling_steps(10_000))
    assert_equal :capped, result.status
    assert_equal 300, result.rate
    assert_nil result.first_fail
    assert_equal [100, 200, 300], result.steps.map(&:rate)
  end

  it "does not conclude from an invalid step: asks the same rate again, and stops without an answer when it stays invalid" do
    asked = []
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 100), &ceiling_steps(385, asked: asked, invalid_at: [400]))
    assert_equal [100, 200, 400, 400, 400], asked.map(&:last)
    assert_equal :unresolved, result.status
    assert_nil result.rate, "an invalid step is neither a pass nor a fail"
    assert_equal 200, result.lower_bound
    assert_nil result.first_fail
    assert_match(/400 req\/s was invalid 3 times/, result.note)
  end

  it "continues after an invalid step that turns valid on retry, concluding only from valid ones" do
    flaky = 0
    step = ceiling_steps(385)
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 100)) do |ask|
      if ask.rate == 400 && flaky.zero?
        flaky += 1
        next verdict(:invalid)
      end
      step.call(ask)
    end
    assert_equal :found, result.status
    assert_equal [100, 200, 400, 400], result.steps.first(4).map(&:rate)
    assert_equal %i[pass pass invalid fail], result.steps.first(4).map(&:status)
  end

  it "confirms the answer with the confirmation runs" do
    asked = []
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 100, "confirmations" => 2), &ceiling_steps(385, asked: asked))
    assert_equal :found, result.status
    assert_equal [[:confirm, result.rate]] * 2, asked.last(2)
  end

  it "steps down by one resolution when a confirmation fails, and confirms again there" do
    asked = []
    plain = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 100, "confirmations" => 1), &ceiling_steps(385))
    result = Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 100, "confirmations" => 1),
                        &ceiling_steps(385, asked: asked, fail_confirm_at: [plain.rate]))
    lower = (plain.rate * 0.95).round
    assert_equal [[:confirm, plain.rate], [:confirm, lower]], asked.last(2)
    assert_equal :found, result.status
    assert_equal lower, result.rate
    assert_equal plain.rate, result.first_fail
  end

  it "asks the same steps when fed the same verdicts (a replay)" do
    first = []
    Rackbench::Capacity::Search.run(capacity_settings("start_rate" => 70), &ceiling_steps(333, asked: first))
    search = Rackbench::Capacity::Search.new(capacity_settings("start_rate" => 70))
    replayed = []
    step = ceiling_steps(333)
    while (ask = search.next_ask)
      replayed << [ask.phase, ask.rate]
      search.record(step.call(ask))
    end
    assert_equal first, replayed
    assert_raises(ArgumentError) { search.record(verdict(:pass)) }
  end
end
