# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../fixtures/fakes"

describe Rackbench::Trial::Script::Outcome do
  Outcome = Rackbench::Trial::Script::Outcome
  FORMAT = "rackbench-micro-fibers"

  let(:document) do
    { "format" => FORMAT, "status" => "ok", "reason" => nil, "mode" => "processes", "workers" => 4,
      "messages" => 40, "measured_s" => 0.01, "messages_per_s" => 4000.0, "warmup_s" => 0.02, "setup_s" => 0.003,
      "teardown_s" => 0.004, "rss_peak_bytes" => 5_000_000, "pss_end_bytes" => 3_000_000 }
  end

  def status(code) = Fakes::Child::Status.new(code, nil)

  def parse(output, code, timed_out: false, timeout_s: 10)
    Outcome.parse(output: output, format: FORMAT, exit_status: status(code), timed_out: timed_out,
                  timeout_s: timeout_s)
  end

  it "keeps a good run's whole document as the result, read by the kind's Reading" do
    outcome = parse("some warning\n#{JSON.generate(document)}\n", 0)
    assert_equal ["ok", nil, document], outcome.values_at(:status, :reason, :result)
    record = Rackbench::Trial::Record.new(key: "k", kind: "script", **outcome)
    assert_equal [4000.0, "msg/s", 40, 0, 0.0], [record.rate, record.rate_unit, record.requests, record.failed_requests,
                                                 record.error_rate]
    assert_equal [0.01, 0.02, 5_000_000, 3_000_000], [record.measure_s, record.warmup_s, record.rss_peak_bytes,
                                                      record.pss_peak_bytes]
    assert_equal "ok 4000.0 msg/s, setup 3.0ms", record.reading.summary(record)
  end

  it "fails a run with the benchmark's reason, or the tail of its output, or the timeout" do
    failed = document.merge("status" => "failed", "reason" => "Mismatch: worker 2 closed its reply pipe after 3 replies")
    assert_equal ["failed", "Mismatch: worker 2 closed its reply pipe after 3 replies"],
                 parse(JSON.generate(failed), 1).values_at(:status, :reason)

    unsupported = document.merge("status" => "unsupported", "reason" => "fork is not available on jruby 9.3.9.0")
    assert_equal "unsupported: fork is not available on jruby 9.3.9.0", parse(JSON.generate(unsupported), 3)[:reason]

    assert_equal "exited with status 1 without a result: line 1 | NoMemoryError: failed to allocate memory",
                 parse("line 1\nNoMemoryError: failed to allocate memory\n", 1)[:reason]
    assert_equal ["failed", "timed out after 2.5s (stopped)"],
                 parse("", 0, timed_out: true, timeout_s: 2.5).values_at(:status, :reason)
    assert_equal "exited with status 1 after its result", parse(JSON.generate(document), 1)[:reason]
  end

  it "finds the last result line and ignores a garbled one" do
    assert_nil Outcome.document("no json here\n{\"format\":\"rackbench-micro-fibers\",\"status\n", FORMAT)
    two = "#{JSON.generate(document.merge("workers" => 1))}\n#{JSON.generate(document)}\n"
    assert_equal 4, Outcome.document(two, FORMAT)["workers"]
    assert_nil Outcome.document(JSON.generate(document.merge("format" => "another")), FORMAT)
  end
end
