# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/capacity_support"

describe Rackbench::Capacity::Judge do
  include Rackbench::Test::CapacitySupport

  let(:settings) { capacity_settings("p99" => "50ms", "max_errors" => "0.1%") }

  def judge(doc, rate: 400, ok: true, reason: nil, connections: 64, with: settings)
    Rackbench::Capacity::Judge.call(settings: with, rate: rate, ok: ok, reason: reason, result: doc,
                                    connections: connections)
  end

  it "passes a step whose percentile holds the target, with errors within the ratio and every request sent" do
    verdict = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 30_000))
    assert_equal :pass, verdict.status
    assert_nil verdict.reason
    assert_in_delta 30.0, verdict.latency_us["p99"] / 1000, 0.3
    assert_in_delta 9.0, verdict.latency_us["p50"] / 1000, 0.1
    assert_in_delta 400.0, verdict.sent_rps, 0.01
  end

  it "fails a step whose percentile is above the target, naming it" do
    verdict = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 80_000))
    assert_equal :fail, verdict.status
    assert_match(/p99 (79|8\d)\.\d+ms above 50\.00ms/, verdict.reason)
  end

  it "reads the target's own percentile: p50 holds where p99 would not" do
    p50 = capacity_settings_without_p99("p50" => "50ms")
    assert_equal :pass, judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 80_000), with: p50).status
  end

  it "fails a step with errors above the ratio, and passes one at the ratio" do
    over = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 20_000, errors: 2)) # 2 of 800: 0.25%
    assert_equal :fail, over.status
    assert_match(/errors 0\.25% above 0\.10%/, over.reason)
    assert_equal :pass, judge(engine_doc(rate: 500, fast_us: 9_000, slow_us: 20_000, errors: 1)).status # 0.1%
  end

  it "marks a would-be pass whose sends fell behind INVALID, not passed" do
    verdict = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 20_000, unsent: 40))
    assert_equal :invalid, verdict.status
    assert_match(/sends fell behind: 380\.0 of 400\.0 req\/s sent, 40 unsent/, verdict.reason)
    assert_equal :pass, judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 20_000, unsent: 0)).status
  end

  it "marks any step INVALID when the engine's CPU was saturated" do
    pass = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 20_000, saturated: true))
    fail = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 90_000, saturated: true))
    assert_equal %i[invalid invalid], [pass.status, fail.status]
    assert_match(/engine's CPU was saturated/, fail.reason)
  end

  it "does not conclude a failure that late sends could explain while every one of too few connections was busy" do
    late = { late_fraction: 0.2, late_max_us: 60_000.0 }
    few = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 90_000, pool: [16, 16], **late), connections: 16)
    assert_equal :invalid, few.status # 2 x 400 req/s x 50 ms = 40 needed
    assert_match(/20\.0% of sends late \(up to 60\.00ms\) with all 16 connections busy: .*raise load.connections to at least 40/,
                 few.reason)
    enough = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 90_000, pool: [40, 40], **late), connections: 40)
    assert_equal :fail, enough.status, "with enough connections, all busy: the server held them"
    on_time = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 90_000, pool: [16, 16]), connections: 16)
    assert_equal :fail, on_time.status, "without late sends the pool made nobody wait"
  end

  it "does not conclude a failure that the engine's own late sends could explain (connections to spare)" do
    own = judge(engine_doc(rate: 100, fast_us: 3_000, slow_us: 90_000, late_fraction: 0.3, late_max_us: 95_000.0,
                           pool: [256, 10]), rate: 100, connections: 256)
    assert_equal :invalid, own.status
    assert_match(/30\.0% of sends late \(up to 95\.00ms\) while 246 of 256 connections were never needed: the engine's own delays/,
                 own.reason)
    beyond = judge(engine_doc(rate: 100, fast_us: 3_000, slow_us: 200_000, late_fraction: 0.3, late_max_us: 95_000.0,
                              pool: [256, 10]), rate: 100, connections: 256)
    assert_equal :fail, beyond.status, "p99 200 ms is beyond target + the largest lateness: the server's"
    errors = judge(engine_doc(rate: 100, fast_us: 3_000, slow_us: 90_000, late_fraction: 0.3, late_max_us: 95_000.0,
                              pool: [256, 10], errors: 5), rate: 100, connections: 256)
    assert_equal :fail, errors.status, "errors fail a step whatever the lateness"
    few_late = judge(engine_doc(rate: 100, fast_us: 3_000, slow_us: 90_000, late_fraction: 0.005, late_max_us: 95_000.0,
                                pool: [256, 10]), rate: 100, connections: 256)
    assert_equal :fail, few_late.status, "1 late request of 200 cannot be the 4 that exceed the target"
    late_pass = judge(engine_doc(rate: 100, fast_us: 3_000, slow_us: 20_000, late_fraction: 0.3, late_max_us: 15_000.0,
                                 pool: [256, 10]), rate: 100, connections: 256)
    assert_equal :pass, late_pass.status, "a pass held the target with its lateness counted"
  end

  it "marks a trial that failed without a measurement INVALID with its reason, and judges one that has a result" do
    none = judge(nil, ok: false, reason: "the server exited during the measurement")
    assert_equal :invalid, none.status
    assert_match(/without a measurement: the server exited/, none.reason)
    failed = judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 20_000, errors: 100), ok: false,
                   reason: "error rate above 1%")
    assert_equal :fail, failed.status
  end

  def capacity_settings_without_p99(section)
    checker = Rackbench::Experiment::Checker.new("capacity_test.yml")
    Rackbench::Capacity::Settings.parse({ "confirmations" => 0 }.merge(section), checker)
  end
end
