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

  it "does not conclude a failure from late sends when the engine had too few connections for rate x target" do
    doc = engine_doc(rate: 400, fast_us: 9_000, slow_us: 90_000, late_fraction: 0.2)
    few = judge(doc, connections: 16) # 2 x 400 x 0.05 = 40 needed
    assert_equal :invalid, few.status
    assert_match(/raise load.connections to at least 40/, few.reason)
    assert_equal :fail, judge(doc, connections: 40).status, "with enough connections the server held them"
    assert_equal :fail, judge(engine_doc(rate: 400, fast_us: 9_000, slow_us: 90_000), connections: 16).status,
                 "without late sends the pool made nobody wait"
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
