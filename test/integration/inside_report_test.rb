# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# The report's inside figures from a real run: `rackbench run` with Puma (a
# master and 2 workers) serving the counted app
# (test/fixtures/apps/counted), which allocates a known N objects per
# request, then `rackbench report --json` and `--html`. The report's
# allocations per request must be N within 2% (issue 12's claim), through
# InsideFigures rather than a hand computation, and every
# process must reach the memory chart.
describe "the inside figures of a real run in the report (integration)" do
  let(:app) { File.expand_path("../fixtures/apps/counted", __dir__) }
  # Far above Puma's own allocations per request (about 50).
  let(:allocations) { 10_000 }

  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-inside-report") }
  after { FileUtils.rm_rf(dir) }

  it "reports N allocations per request, CPU per request and every process's memory" do
    file = File.join(dir, "inside.yml")
    # 10 s windows: each process counts over its own window, up to a GVL
    # timeslice late at each edge; a long window keeps that small beside
    # it on a busy machine (branch inside measured 5 s windows 2.2% off).
    File.write(file, <<~YAML)
      name: inside-report
      seed: 3
      batches: 1
      servers: [puma]
      apps: [{ name: allocating, path: #{app}, health: /up, env: { ALLOCATE_PER_REQUEST: "#{allocations}" } }]
      processes: 2
      threads: 1
      load: { connections: 4, duration: 10s, warmup: 1s, timeout: 10s }
    YAML
    results = File.join(dir, "results")
    out, err, status = rackbench("run", file, "--results", results)
    assert status.success?, "#{out}\n#{err}"
    assert_includes out, "Inside the server"

    json, err, status = rackbench("report", "--results", results, "--json")
    assert status.success?, err
    doc = JSON.parse(json)
    inside = doc["configs"].first["inside"]
    assert_equal "counting", inside["agent"]
    reported = inside["figures"]["allocations_per_request"]["median"]
    assert_in_delta allocations, reported, allocations * 0.02, JSON.pretty_generate(inside["figures"])
    assert_operator inside["figures"]["cpu_us_per_request"]["median"], :>, 0
    assert_operator inside["figures"]["gc_per_1k_requests"]["median"], :>, 0, "10,000 objects a request fill the heap"
    assert_equal %w[master worker worker], inside["memory"].map { |p| p["role"] }.sort
    assert(inside["memory"].all? { |p| p["warmup_end_pss_bytes"].positive? && p["window_end_pss_bytes"].positive? })
    assert_equal inside["figures"]["allocations_per_request"]["median"], doc["trials"].first["inside"]["allocations_per_request"]

    html_path = File.join(dir, "report.html")
    _, err, status = rackbench("report", "--results", results, "--html", html_path)
    assert status.success?, err
    html = File.read(html_path)
    spec = JSON.parse(html[%r{<script type="application/json" id="spec-inside-memory-0">(.*?)</script>}m, 1])
    assert_equal 6, spec["data"]["values"].size, "3 processes at 2 moments"
  end
end
