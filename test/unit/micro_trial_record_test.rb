# frozen_string_literal: true

require "test_helper"
require "json"

describe Rackbench::Micro::TrialRecord do
  record = Rackbench::Micro::TrialRecord

  let(:install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: "/usr/bin/ruby", source: :path, engine: "ruby",
                                   version: "3.1.2", ruby_version: "3.1.2", description: "ruby 3.1.2", jit: ["yjit"])
  end
  let(:variant) { Rackbench::Rubies::Variant.new(install: install, options: ["--yjit"]) }
  let(:settings) { Rackbench::Micro::Settings.build(rubies: ["ruby --yjit"], workers: "4", messages: "10", work: "2") }
  let(:plan) { Rackbench::Micro::Plan.new(settings, { variant.name => variant }) }
  let(:trial) { plan.find { |t| t.config.mode == "processes" } }
  let(:document) do
    { "format" => "rackbench-micro-fibers", "status" => "ok", "reason" => nil, "mode" => "processes", "workers" => 4,
      "messages" => 40, "measured_s" => 0.01, "messages_per_s" => 4000.0, "warmup_s" => 0.02, "setup_s" => 0.003,
      "teardown_s" => 0.004, "rss_peak_bytes" => 5_000_000, "pss_end_bytes" => 3_000_000 }
  end

  def status(code)
    Process.wait2(Process.spawn(RbConfig.ruby, "-e", "exit #{code}")).last
  end

  it "fills the identity and configuration columns as the HTTP runner does" do
    attrs = record.base(trial: trial, variant: variant, settings: settings, cpus: [0])
    assert_equal trial.key, attrs[:key]
    assert_equal [trial.batch, trial.index], attrs.values_at(:batch, :position)
    assert_equal ["ruby --yjit", "processes", "micro-fibers", 4, 1], attrs.values_at(:ruby, :server, :app, :processes, :threads)
    assert_equal "ruby 3.1.2 with --yjit", attrs[:ruby_description]
    assert_equal trial.config.dims, attrs[:dims]
    assert_equal({ "benchmark" => "fibers", "mode" => "processes", "workers" => 4, "messages_per_worker" => 10,
                   "warmup_rounds" => 1, "work_passes" => 2, "timeout_s" => 300.0 }, attrs[:load_settings])
    assert_equal({ "server_cpus" => [0], "engine_cpus" => nil }, attrs[:layout])
    assert_equal %w[--mode processes --workers 4 --messages 10 --warmup 1 --work 2], record.arguments(trial, settings)
  end

  it "stores a good run's measurements, messages/s as rps and the whole document" do
    output = "some warning\n#{JSON.generate(document)}\n"
    attrs = record.outcome(output: output, exit_status: status(0), timed_out: false, timeout_s: 10)
    assert_equal "ok", attrs[:status]
    assert_equal [4000.0, 40, 0, 0.0], attrs.values_at(:rps, :requests, :errors, :error_rate)
    assert_equal [0.01, 0.02, 0.003, 0.004], attrs.values_at(:measure_s, :warmup_s, :boot_s, :stop_s)
    assert_equal [5_000_000, 3_000_000], attrs.values_at(:rss_peak_bytes, :pss_peak_bytes)
    assert_equal document, attrs[:engine_result]
    assert_nil attrs[:reason]
  end

  it "fails a run with the benchmark's reason, or the tail of its output, or the timeout" do
    failed = document.merge("status" => "failed", "reason" => "Mismatch: worker 2 closed its reply pipe after 3 replies")
    attrs = record.outcome(output: JSON.generate(failed), exit_status: status(1), timed_out: false, timeout_s: 10)
    assert_equal ["failed", "Mismatch: worker 2 closed its reply pipe after 3 replies"], attrs.values_at(:status, :reason)
    assert_nil attrs[:rps]

    unsupported = document.merge("status" => "unsupported", "reason" => "fork is not available on jruby 9.3.9.0")
    attrs = record.outcome(output: JSON.generate(unsupported), exit_status: status(3), timed_out: false, timeout_s: 10)
    assert_equal "unsupported: fork is not available on jruby 9.3.9.0", attrs[:reason]

    attrs = record.outcome(output: "line 1\nNoMemoryError: failed to allocate memory\n", exit_status: status(1),
                           timed_out: false, timeout_s: 10)
    assert_equal "exited with status 1 without a result: line 1 | NoMemoryError: failed to allocate memory", attrs[:reason]

    attrs = record.outcome(output: "", exit_status: status(0), timed_out: true, timeout_s: 2.5)
    assert_equal ["failed", "timed out after 2.5s (stopped)"], attrs.values_at(:status, :reason)

    attrs = record.outcome(output: JSON.generate(document), exit_status: status(1), timed_out: false, timeout_s: 1)
    assert_equal "exited with status 1 after its result", attrs[:reason]
  end

  it "finds the last result line and ignores a garbled one" do
    assert_nil record.document("no json here\n{\"format\":\"rackbench-micro-fibers\",\"status\n")
    two = "#{JSON.generate(document.merge("workers" => 1))}\n#{JSON.generate(document)}\n"
    assert_equal 4, record.document(two)["workers"]
  end
end
