# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

describe Rackbench::LoadResult do
  let(:doc) { JSON.parse(File.read(File.expand_path("../fixtures/engine_result.json", __dir__))) }

  it "exposes the measured figures" do
    r = Rackbench::LoadResult.new(doc)
    assert_equal 400, r.requests
    assert_equal 0, r.error_count
    assert_equal 0.0, r.failure_rate
    assert_equal 0, r.bad_status_count
    refute r.interrupted?
    assert_equal 200.0, r.offered_rps
    assert_equal 0, r.unsent
  end

  it "reads the open loop's offered rate and unsent count, both nil in closed loop" do
    doc["late"]["unsent"] = 7
    doc["late"]["scheduled"] = 407
    doc["offered_rps"] = 203.5
    r = Rackbench::LoadResult.new(doc)
    assert_equal 7, r.unsent
    assert_equal 203.5, r.offered_rps

    doc["late"] = nil
    doc["offered_rps"] = nil
    doc["settings"]["mode"] = "closed"
    closed = Rackbench::LoadResult.new(doc)
    assert_nil closed.unsent
    assert_nil closed.offered_rps
  end

  # One definition of a failed request, for the live result and a stored
  # one: transport errors and statuses other than 2xx/3xx, over responses
  # plus transport errors.
  it "counts failed requests over all attempts" do
    doc["errors"]["timeout"] = 100
    doc["status"] = { "200" => 300, "500" => 100 }
    doc["requests"] = 400
    r = Rackbench::LoadResult.new(doc)
    assert_equal [100, 100, 200, 500], [r.error_count, r.bad_status_count, r.failed_count, r.attempts]
    assert_in_delta 200.0 / 500, r.failure_rate
    assert_equal 200, Rackbench::LoadResult::Counts.failed(doc)
    assert_equal 500, Rackbench::LoadResult::Counts.attempts(doc)
  end

  it "rejects a document that breaks the contract, naming the key" do
    [
      [->(d) { d["format_version"] = 2 }, /version 2/],
      [->(d) { d.delete("rps") }, /rps is nil/],
      [->(d) { d["timeline"] = {} }, /timeline/],
      [->(d) { d["latency_us"].delete("p99_9") }, /latency_us lacks p99_9/],
      [->(d) { d["errors"].delete("parse") }, /errors lacks parse/],
      [->(d) { d["cpu"].delete("saturated") }, /cpu lacks saturated/],
      [->(d) { d.delete("offered_rps") }, /late is present but offered_rps is nil/],
      [->(d) { d["offered_rps"] = "fast" }, /offered_rps is "fast", expected Numeric or NilClass/],
      [->(d) { d["late"] = nil }, /late is null but offered_rps is 200.0/],
      [->(d) { d["late"].delete("unsent") }, /late.unsent is nil, expected Integer/],
      [->(d) { d["late"]["unsent"] = 1.5 }, /late.unsent is 1.5/],
      [->(d) { d["late"].delete("scheduled") }, /late.scheduled is nil/]
    ].each do |mutate, pattern|
      broken = JSON.parse(JSON.generate(doc))
      mutate.call(broken)
      error = assert_raises(Rackbench::EngineError) { Rackbench::LoadResult.new(broken) }
      assert_match pattern, error.message
    end
  end

  describe "entries" do
    let(:listed) { JSON.parse(File.read(File.expand_path("../fixtures/engine_result_entries.json", __dir__))) }

    it "offers a request list's per-entry results, adding up to the totals" do
      r = Rackbench::LoadResult.new(listed)
      assert_equal %w[login-form login home echo], r.entries.map { |e| e["name"] }
      assert_equal r.requests, r.entries.sum { |e| e["requests"] }
      r.status.each { |code, n| assert_equal n, r.entries.sum { |e| e["status"].fetch(code, 0) } }
      r.errors.each { |kind, n| assert_equal n, r.entries.sum { |e| e["errors"][kind] } }
      assert_equal r.warmup["requests"], r.entries.sum { |e| e["warmup"]["requests"] }
    end

    it "is nil for one URL and for results stored before entries and the capture and redirect kinds" do
      assert_nil Rackbench::LoadResult.new(doc).entries
      old = JSON.parse(JSON.generate(doc))
      old.delete("entries")
      [old["errors"], old["warmup"]["errors"]].each { |e| e.delete("capture"); e.delete("redirect") }
      assert_nil Rackbench::LoadResult.new(old).entries
    end

    it "rejects entries that break the contract" do
      [
        [->(d) { d["entries"] = {} }, /entries is \{\}, expected Array or null/],
        [->(d) { d["entries"][0] = 1 }, /entries\[0\] is not an object/],
        [->(d) { d["entries"][1].delete("hops") }, /entries\[1\].hops is nil/],
        [->(d) { d["entries"][2]["latency_us"].delete("p99") }, /entries\[2\].latency_us lacks p99/],
        [->(d) { d["entries"][2]["requests"] += 1 }, /entries' requests add up to \d+, not requests \d+/]
      ].each do |mutate, pattern|
        broken = JSON.parse(JSON.generate(listed))
        mutate.call(broken)
        error = assert_raises(Rackbench::EngineError) { Rackbench::LoadResult.new(broken) }
        assert_match pattern, error.message
      end
    end
  end

  it "matches doc/output.md both ways: every key written is documented, every documented key written" do
    text = File.read(File.expand_path("../../doc/output.md", __dir__))
    engine_section = text[/^## The load engine's result.*?(?=^## )/m]
    documented = engine_section.scan(/^\| `([a-z0-9_.]+)`/).flatten
    keys = lambda do |value, prefix|
      case value
      when Hash
        # status codes are data, not keys
        return [] if %w[status warmup.status entries.status entries.warmup.status].include?(prefix)

        value.flat_map { |k, v| [prefix ? "#{prefix}.#{k}" : k] + keys.call(v, prefix ? "#{prefix}.#{k}" : k) }
      when Array then value.first.is_a?(Hash) ? keys.call(value.first, prefix) : []
      else []
      end
    end
    # A request list's result carries entries (null in the single-URL one).
    with_entries = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_entries.json", __dir__)))
    # An h2c run's (a real one against nghttpd) carries the h2 object.
    h2c = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_h2c.json", __dir__)))
    # An https:// run's (a real one against nginx, --no-keepalive) carries the tls objects.
    tls = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_tls.json", __dir__)))
    written = (keys.call(doc, nil) + keys.call(with_entries, nil) + keys.call(h2c, nil) + keys.call(tls, nil)).uniq
    assert_empty written - documented, "keys missing from doc/output.md"
    assert_empty documented - written, "documented keys the engine does not write"
  end
end

describe Rackbench::LoadSummary do
  let(:doc) { JSON.parse(File.read(File.expand_path("../fixtures/engine_result.json", __dir__))) }

  it "summarises like wrk, with percentiles and the engine's cost" do
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s
    assert_match(/open loop at 200.0 req\/s, 2 connections, 1 thread, keep-alive/, text)
    assert_match(/Requests:\s+400 in 2.00s, 200.0 req\/s/, text)
    assert_match(/p50 .* p90 .* p99 .* p99.9 .* max/, text)
    assert_match(/Engine CPU:/, text)
    assert_match(/Late sends:/, text)
    assert_match(/Offered:\s+200.0 req\/s \(400 scheduled\), 0 unsent/, text)
    refute_match(/Unsent:/, text)
    refute_match(/WARNING/, text)
  end

  it "says when connections went unserved and when slots lost their session" do
    listed = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_entries.json", __dir__)))
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(listed)).to_s
    refute_match(/Unserved:/, text)
    assert_match(/^  Sessions:    1 of 2 connection slots lost their session \(failed probes: 0 at the window's start, 1 after its end; slots 1\): slot 1: session-probe: status 302 to \/login, expected 200$/, text)
    listed["service"]["connections"].merge!("served" => 1, "unserved" => 1, "unserved_slots" => [1], "max_wait_us" => 2_500_000.0)
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(listed)).to_s
    assert_match(/^  Unserved:    only 1 of 2 connections got a response in the window \(the longest wait 2\.5s\); the figures are those of the connections served$/, text)
  end

  it "prints a row per request-list entry, and none for a single URL" do
    listed = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_entries.json", __dir__)))
    listed["entries"][1]["warmup"]["errors"]["capture"] = 2
    listed["warmup"]["errors"]["capture"] = 2
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(listed)).to_s
    assert_match(/^  Entries:\n    entry +requests +status +p50 \/ p99 +errors$/, text)
    home = listed["entries"][2]
    assert_match(/^    home +#{home["requests"]} +200x#{home["status"]["200"]} +\S+ \/ \S+ +-$/, text)
    assert_match(/^    login \(first\) +0 +- +- +warmup errors 2$/, text)
    refute_match(/Entries:/, Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s)
  end

  it "says how many scheduled requests never went out" do
    doc["late"]["unsent"] = 376
    doc["late"]["scheduled"] = 776
    doc["offered_rps"] = 388.0
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s
    assert_match(/Offered:\s+388.0 req\/s \(776 scheduled\), 376 unsent/, text)
    assert_match(/Unsent:\s+376 scheduled requests never went out/, text)
  end

  it "shows no open-loop lines in closed loop" do
    doc["late"] = nil
    doc["offered_rps"] = nil
    doc["settings"]["mode"] = "closed"
    doc["settings"]["rate"] = nil
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s
    assert_match(/closed loop, 2 connections/, text)
    refute_match(/Offered:|Unsent:|Late sends:/, text)
  end

  it "warns when the engine was saturated and lists errors" do
    doc["cpu"]["saturated"] = true
    doc["cpu"]["utilization"] = 0.97
    doc["errors"]["connect"] = 3
    doc["connections"]["established"] = 1
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s
    assert_match(/WARNING: the engine was saturated \(97% CPU\)/, text)
    assert_match(/Errors:\s+connect 3/, text)
    assert_match(/only 1 of 2 requested connections/, text)
  end

  it "says plainly when nothing answered" do
    doc["requests"] = 0
    doc["status"] = {}
    doc["errors"]["connect"] = 50
    text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s
    assert_match(/Latency:\s+no responses/, text)
  end
end

describe Rackbench::CLI do

  it "prints usage and version" do
    code, out, = cli("--help")
    assert_equal 0, code
    assert_match(/load\s+drive HTTP load/, out)
    assert_equal [0, "rackbench #{Rackbench::VERSION}\n", ""], cli("--version")
  end

  it "answers an unknown command with one line and exit 2" do
    assert_equal [2, "", "rackbench: unknown command 'lod' (see rackbench --help)\n"], cli("lod")
  end

  it "checks load arguments before starting anything" do
    code, _, err = cli("load")
    assert_equal 2, code
    assert_match(/exactly one URL/, err)
    code, _, err = cli("load", "--duration", "soon", "http://127.0.0.1:1/")
    assert_equal 2, code
    assert_equal "rackbench: invalid --duration \"soon\" (expected e.g. 10s, 500ms, 2m)\n", err
    code, out, = cli("load", "--help")
    assert_equal 0, code
    assert_match(/--no-keepalive/, out)
  end
end
