# frozen_string_literal: true

require "test_helper"
require_relative "../support/inside_document"

describe Rackbench::Report::InsideFigures do
  InsideFiguresSampled = Struct.new(:inside, :cpu_user_s, :cpu_system_s, :requests, keyword_init: true)

  def figures(inside, cpu_user_s: 1.5, cpu_system_s: 0.5, requests: 10_000)
    Rackbench::Report::InsideFigures.of(InsideFiguresSampled.new(inside: inside, cpu_user_s: cpu_user_s,
                                                    cpu_system_s: cpu_system_s, requests: requests))
  end

  describe "a forking server whose second worker saw a shorter window" do
    let(:f) { figures(InsideDocument.forked) }

    it "divides the processes' summed deltas by the engine's responses in its window" do
      # Engine: 10,000 responses. Allocations: master 1,000 + worker 1
      # 500,000 + worker 2 400,000 (its snapshots 8 s apart: late at an
      # edge when its server stalled, which served nothing meanwhile).
      assert_in_delta 90.1, f["allocations_per_request"], 1e-9
      refute_in_delta 100.1, f["allocations_per_request"], 1.0, "rates per process would count the stall as work"
      # GC runs: 0 + 20 + 16 = 36 per 10,000 requests.
      assert_in_delta 3.6, f["gc_per_1k_requests"], 1e-9
      # GC ms: 0 + 100 + 80 = 180 ms per 10,000 requests.
      assert_in_delta 18.0, f["gc_ms_per_1k_requests"], 1e-9
      # Major: 2 + 1 = 3.
      assert_in_delta 0.3, f["major_gc_per_1k_requests"], 1e-9
    end

    it "takes the memory of the workers, leaving the master out but for the tree's total" do
      assert_in_delta 59 * InsideDocument::MB, f["worker_pss_bytes"], 1e-6, "(60 + 58) / 2 MB"
      assert_in_delta 8 * InsideDocument::MB, f["worker_pss_growth_bytes"], 1e-6, "(10 + 6) / 2 MB"
      assert_equal 149 * InsideDocument::MB, f["total_pss_bytes"], "31 + 60 + 58 MB"
    end

    it "reads YJIT's code size on both ruby generations and its ratio where measured" do
      assert_in_delta 3_500_000, f["yjit_code_bytes"], 1e-6, "(4 MB region + (2 + 1) MB inline and outlined) / 2"
      assert_in_delta 0.9, f["yjit_ratio"], 1e-12, "only the worker whose --yjit-stats measured it"
    end

    it "computes CPU per request from the sampler over the window's requests" do
      assert_in_delta 200.0, f["cpu_us_per_request"], 1e-9, "(1.5 + 0.5) s * 1e6 / 10,000"
      assert_in_delta 200.0, figures(InsideDocument.forked, requests: 99)["cpu_us_per_request"], 1e-9
      doubled = InsideDocument.forked.merge("window" => { "requests" => 20_000, "duration_s" => 10.0 })
      assert_in_delta 100.0, figures(doubled, requests: 99)["cpu_us_per_request"], 1e-9,
                      "the inside document's window requests, not the fallback"
    end
  end

  it "counts RubyVM.stat's cache invalidations under each ruby's name, and none where it has neither" do
    doc = InsideDocument.forked
    # 3.2+ names them constant_cache_invalidations, 3.1 global_constant_state.
    doc["processes"][0]["vm"] = { "constant_cache_invalidations" => 3, "class_serial" => 10 }
    doc["processes"][1]["vm"] = { "global_constant_state" => 7, "class_serial" => 20, "global_cvar_state" => 1 }
    doc["processes"][2]["vm"] = { "global_constant_state" => 0, "class_serial" => 0 }
    f = figures(doc)
    assert_in_delta 1.0, f["constant_invalidations_per_1k_requests"], 1e-9, "1000 * (3 + 7 + 0) / 10,000"
    assert_in_delta 3.0, f["class_serial_per_1k_requests"], 1e-9, "1000 * (10 + 20 + 0) / 10,000"
    doc["processes"][2]["vm"] = {} # a ruby without RubyVM.stat (JRuby): no partial sum
    f = figures(doc)
    assert_nil f["constant_invalidations_per_1k_requests"]
    assert_nil f["class_serial_per_1k_requests"]
    assert_in_delta 90.1, f["allocations_per_request"], 1e-9, "the other figures stay"
  end

  it "treats a server that forked nothing as its single process" do
    single = InsideDocument.document([InsideDocument.process(pid: 5, role: "single", allocated: 3_000_000,
                                                             gc_count: 5, major: 0, warmup_pss: 40 * InsideDocument::MB,
                                                             window_pss: 38 * InsideDocument::MB)])
    f = figures(single)
    assert_in_delta 300.0, f["allocations_per_request"], 1e-9
    assert_in_delta 0.5, f["gc_per_1k_requests"], 1e-9
    assert_in_delta 0.0, f["major_gc_per_1k_requests"], 1e-12
    assert_in_delta 38 * InsideDocument::MB, f["worker_pss_bytes"], 1e-6
    assert_in_delta(-2 * InsideDocument::MB, f["worker_pss_growth_bytes"], 1e-6, "memory that shrank is a negative growth")
    assert_equal 38 * InsideDocument::MB, f["total_pss_bytes"]
    assert_nil f["yjit_code_bytes"]
    assert_nil f["yjit_ratio"]
  end

  describe "nil-safety" do
    it "gives nil for a record without inside figures or CPU time (old stores, script trials)" do
      assert_nil figures(nil, cpu_user_s: nil, cpu_system_s: nil)
      assert_nil figures("not a document", cpu_user_s: nil, cpu_system_s: nil)
      record = Rackbench::Trial::Record.new(key: "k", kind: "script", status: "ok", result: { "messages_per_s" => 5 })
      assert_nil Rackbench::Report::InsideFigures.of(record)
    end

    it "gives CPU per request alone when the agent was off, from the engine's responses" do
      f = figures(nil, requests: 4000)
      assert_in_delta 500.0, f["cpu_us_per_request"], 1e-9
      (Rackbench::Report::InsideFigures::NAMES - ["cpu_us_per_request"]).each { |name| assert_nil f[name], name }
      assert_nil figures(nil, requests: 0), "no responses: nothing to divide by"
    end

    it "reads CPU time of a stored HTTP record's sample" do
      record = Rackbench::Trial::Record.new(key: "k", kind: "http", status: "ok", result: { "requests" => 2000 },
                                            sample: { "cpu_user_s" => 0.3, "cpu_system_s" => 0.1 })
      assert_in_delta 200.0, Rackbench::Report::InsideFigures.of(record)["cpu_us_per_request"], 1e-9
    end

    it "gives no GC time when a process's ruby does not measure it (3.1), keeping the other figures" do
      doc = InsideDocument.forked
      doc["processes"][2]["gc"]["time_ms"] = nil
      f = figures(doc)
      assert_nil f["gc_ms_per_1k_requests"]
      assert_in_delta 3.6, f["gc_per_1k_requests"], 1e-9
    end

    it "refuses a figure it cannot compute rather than give a partial sum" do
      doc = InsideDocument.forked
      doc["processes"][1]["duration_s"] = 0.0
      assert_nil figures(doc)["allocations_per_request"], "a process without a window"
      doc = InsideDocument.forked
      doc["processes"][1].delete("allocated_objects")
      assert_nil figures(doc)["allocations_per_request"], "a process without the count"
      assert_in_delta 3.6, figures(doc)["gc_per_1k_requests"], 1e-9
      doc = InsideDocument.forked.merge("window" => { "requests" => 0, "duration_s" => 10.0 })
      assert_nil figures(doc)["gc_per_1k_requests"], "an engine window without responses"
      doc = InsideDocument.forked.merge("window" => nil)
      assert_nil figures(doc)["gc_per_1k_requests"]
      doc = InsideDocument.forked
      doc["processes"][0]["memory"] = nil
      assert_nil figures(doc)["total_pss_bytes"], "the tree's total needs every process"
      assert_in_delta 59 * InsideDocument::MB, figures(doc)["worker_pss_bytes"], 1e-6
    end

    it "gives nil figures for a document without processes, and no memory points" do
      f = figures(InsideDocument.document([]))
      assert_in_delta 200.0, f["cpu_us_per_request"], 1e-9
      (Rackbench::Report::InsideFigures::NAMES - ["cpu_us_per_request"]).each { |name| assert_nil f[name], name }
      assert_empty Rackbench::Report::InsideFigures.memory_points(nil)
    end
  end

  it "gives the memory points of every process for the chart" do
    points = Rackbench::Report::InsideFigures.memory_points(InsideDocument.forked)
    assert_equal [10, 11, 12], points.map { |p| p["pid"] }
    assert_equal({ "pid" => 12, "role" => "worker", "warmup_end_pss_bytes" => 52 * InsideDocument::MB,
                   "window_end_pss_bytes" => 58 * InsideDocument::MB }, points.last)
  end
end
