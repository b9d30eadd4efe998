# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/report_store"

# Latency and throughput against load.connections (seed 002's sweep), over
# stored synthetic experiments whose latency grows with the connections.
describe Rackbench::Report::ConcurrencySweep do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  def dims(server, connections, threads: 4)
    { "ruby" => "ruby", "server" => server, "app" => "rack-hello", "processes" => 1, "threads" => threads,
      "load.connections" => connections }
  end

  # Each trial's histogram is the fixture's with every latency multiplied
  # by the connections, and by 2 again in even batches (powers of 2 map the
  # log-linear buckets onto buckets, so the histograms still merge).
  def slower(dims, batch, engine)
    factor = dims["load.connections"].to_i * (batch.even? ? 2 : 1)
    histogram = engine["histogram"].merge(
      "buckets" => engine["histogram"]["buckets"].map { |low, high, n| [(low * factor).round, (high * factor).round, n] },
      "min_ns" => (engine["histogram"]["min_ns"] * factor).round, "max_ns" => (engine["histogram"]["max_ns"] * factor).round,
      "mean_ns" => engine["histogram"]["mean_ns"] * factor, "m2_ns2" => engine["histogram"]["m2_ns2"] * factor * factor
    )
    { result: engine.merge("histogram" => histogram) }
  end

  def report(configs)
    Rackbench::Store.open(Dir.mktmpdir("results", dir)) do |store|
      ReportStore.fill(store, configs, fields: method(:slower))
      Rackbench::Report.new(store)
    end
  end

  let(:swept) do
    report({ dims("puma", 1) => [100, 102, 98, 101, 99], dims("puma", 4) => [400, 404, 396, 401, 399],
             dims("puma", 16) => [410, 412, 408, 409, 411], dims("unicorn", 1, threads: 1) => [90],
             dims("unicorn", 4, threads: 1) => [95], dims("unicorn", 16, threads: 1) => [96] })
  end
  let(:fixture_p99_us) { Rackbench::Stats::LatencyHistogram.new(ReportStore::ENGINE_RESULT["histogram"]).percentile_us(99) }

  it "groups by everything but connections, points in connections order, percentiles of the merged histograms" do
    sweeps = swept.to_h["concurrency_sweep"]
    assert_equal ["puma · 4", "unicorn · 1"], sweeps.map { |s| s["label"] }
    puma = sweeps.first
    assert_equal [1, 4, 16], puma["points"].map { |p| p["connections"] }
    assert_equal [100.0, 400.0, 410.0], puma["points"].map { |p| p["rps_median"] }
    refute_nil puma["points"].first["rps_ci95"], "five batches give an interval"
    # The merged p99 lies between the fastest and the slowest batch's.
    point = puma["points"][1]
    low, high = point["latency_us_batch_range"]["p99"]
    assert_operator low, :<, high
    assert_operator point["latency_us"]["p99"], :>=, low
    assert_operator point["latency_us"]["p99"], :<=, high
    assert_in_delta fixture_p99_us * 4, low, fixture_p99_us * 0.05 # odd batches: × 4 connections
    assert_in_delta fixture_p99_us * 8, high, fixture_p99_us * 0.1 # even batches: × 2 more
    # The same configuration as the configurations table reads it.
    config = swept.configs.find { |c| c.id == point["config_id"] }
    assert_equal config.histogram.percentile_us(99), point["latency_us"]["p99"]
    assert_equal %w[p50 p95 p99], point["latency_us"].keys
    p99s = puma["points"].map { |p| p["latency_us"]["p99"] }
    assert_equal p99s.sort, p99s, "latency grows with the connections"
  end

  it "is documented key by key in doc/output.md" do
    text = File.read(File.expand_path("../../doc/output.md", __dir__))[/^### concurrency_sweep.*?(?=^### )/m]
    sweep = swept.to_h["concurrency_sweep"].first
    documented = text.scan(/^\| `concurrency_sweep\.([a-z_]+)`/).flatten
    assert_equal sweep.keys.sort, documented.sort
    points_row = text[/^\| `concurrency_sweep\.points`.*$/]
    sweep["points"].first.each_key { |key| assert_includes points_row, "`#{key}`" }
  end

  it "gives no batch range or interval for one batch" do
    unicorn = swept.to_h["concurrency_sweep"].last
    assert(unicorn["points"].all? { |p| p["latency_us_batch_range"].nil? && p["rps_ci95"].nil? })
    refute_nil unicorn["points"].first["latency_us"]["p50"]
  end

  it "is absent when connections is not a dimension" do
    flat = report({ dims("puma", 16) => [400], dims("unicorn", 16, threads: 1) => [300] })
    refute flat.to_h.key?("concurrency_sweep")
    assert_nil flat.concurrency_sweep
    refute_match(/against connections/, flat.terminal_table)
    html = Rackbench::HtmlReport.new(JSON.parse(JSON.generate(flat.to_h))).render
    refute_includes html, "concurrency-sweep"
  end

  it "shows a table per sweep in the terminal, with the batch range of each percentile" do
    text = swept.terminal_table
    assert_match(/Latency and throughput against connections/, text)
    row = text.lines.find { |l| l.match?(/^\|\s+16 \|\s+410 \|/) }
    refute_nil row, text
    assert_match(/ms \[[\d.]+ms–[\d.]+ms\]/, row)
    unicorn_row = text.lines.find { |l| l.match?(/^\|\s+16 \|\s+96\.0 \|/) }
    refute_match(/\[/, unicorn_row)
  end

  it "draws latency and throughput against connections in the HTML page, with a table per sweep" do
    html = Rackbench::HtmlReport.new(JSON.parse(JSON.generate(swept.to_h))).render
    json = html[%r{<script type="application/json" id="spec-concurrency-sweep">(.*?)</script>}m, 1]
    refute_nil json
    spec = JSON.parse(json)
    rows = spec["data"]["values"]
    latency = rows.select { |r| r["panel"] == "latency" }
    assert_equal 2 * 3 * 3, latency.size # 2 sweeps × 3 connections × p50/p95/p99
    assert_equal 6, rows.count { |r| r["panel"] == "rate" }
    assert_equal 2, spec["vconcat"].size
    assert_equal "log", spec["vconcat"][0]["layer"][0]["encoding"]["x"]["scale"]["type"]
    assert_includes html, %(<a href="#concurrency-sweep">)
    assert_includes html, "<h3>unicorn · 1</h3>"
  end
end
