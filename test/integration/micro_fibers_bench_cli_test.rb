# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# The standalone benchmark script through its command line, in a process of
# its own, as rackbench micro runs it. Tiny sizes.
describe "fibers_bench.rb's command line" do
  let(:script) { Rackbench::Micro::FIBERS_SCRIPT }

  def run_script(*args)
    Open3.capture3(RbConfig.ruby, script, *args)
  end

  contract = {
    "format" => String, "format_version" => Integer, "status" => String, "mode" => String, "workers" => Integer,
    "messages_per_worker" => Integer, "messages" => Integer, "replies_checked" => Integer,
    "warmup_rounds" => Integer, "work_passes" => Integer, "message_bytes" => Integer, "reply_bytes" => Integer,
    "measured" => String, "measured_s" => Float, "messages_per_s" => Float, "round_trip_us" => Float,
    "prepare_s" => Float, "setup_s" => Float, "warmup_s" => Float, "teardown_s" => Float, "gc_runs" => Integer,
    "processes" => Integer, "rss_peak_bytes" => Integer, "rss_peak_master_bytes" => Integer,
    "pss_end_bytes" => Integer, "ruby_engine" => String, "ruby_version" => String, "ruby_description" => String,
    "pid" => Integer
  }

  %w[threads processes fibers].each do |mode|
    it "runs #{mode} from the command line: one JSON document with the documented fields" do
      out, err, status = run_script("--mode", mode, "--workers", "3", "--messages", "40", "--warmup", "1")
      assert status.success?, err
      assert_equal 1, out.lines.size
      doc = JSON.parse(out)
      contract.each { |key, type| assert_kind_of type, doc[key], "#{key} in #{doc}" }
      assert_equal ["rackbench-micro-fibers", 1, "ok", mode], doc.values_at("format", "format_version", "status", "mode")
      assert_nil doc["reason"]
      assert_equal [3, 40, 120, 120], doc.values_at("workers", "messages_per_worker", "messages", "replies_checked")
      assert_in_delta doc["messages"] / doc["measured_s"], doc["messages_per_s"], 1e-6 * doc["messages_per_s"]
      assert_equal(mode == "processes" ? 4 : 1, doc["processes"])
      if mode == "processes"
        assert_operator doc["rss_peak_workers_bytes"], :>, 0
        assert_equal doc["rss_peak_bytes"], doc["rss_peak_master_bytes"] + doc["rss_peak_workers_bytes"]
      else
        assert_nil doc["rss_peak_workers_bytes"]
      end
    end
  end

  it "runs without a warmup round" do
    out, _err, status = run_script("--mode", "fibers", "--workers", "1", "--messages", "1", "--warmup", "0")
    assert status.success?
    assert_equal 1, JSON.parse(out)["replies_checked"]
  end

  it "rejects bad arguments with one line and status 2" do
    [%w[--workers 2], %w[--mode lightweight], %w[--mode threads --workers 0], %w[--mode fibers --messages x]].each do |args|
      out, err, status = run_script(*args)
      assert_equal 2, status.exitstatus, args.inspect
      assert_equal "", out
      assert_equal 1, err.lines.size, err
      assert_match(/\Afibers_bench: /, err)
    end
  end
end
