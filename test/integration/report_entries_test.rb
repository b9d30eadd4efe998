# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# A tiny experiment with a request list against rack-hello, through the
# command line: the real engine's per-entry results (doc/output.md,
# "entries") reach the report document as one configs.entries row per
# entry of the list.
describe "per-page results of a real run (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-entries") }
  let(:results) { File.join(dir, "results") }
  after { FileUtils.rm_rf(dir) }

  it "reports one row per entry of the list, whose counts add up to the trial's" do
    File.write(File.join(dir, "pages.requests"), <<~REQUESTS)
      --- name=home weight=3
      GET /

      --- weight=1
      GET /other
    REQUESTS
    experiment = File.join(dir, "pages.yml")
    File.write(experiment, <<~YAML)
      name: pages
      batches: 1
      rubies: [ruby]
      servers: [puma]
      apps: [rack-hello]
      processes: 1
      threads: 1
      load: { connections: 2, duration: 0.5s, warmup: 0.2s, requests: pages.requests }
    YAML
    out, err, status = rackbench("run", experiment, "--results", results)
    assert status.success?, "run failed: #{err}\n#{out}"

    trial = Rackbench::Store.open(results) { |store| store.trials.first }
    assert trial.ok?, trial.reason
    assert trial.result.key?("entries"), "the engine reports per-entry results"

    out, err, status = rackbench("report", "--results", results, "--json")
    assert status.success?, err
    entries = JSON.parse(out)["configs"].first["entries"]
    assert_equal [[0, "home", "home", 3], [1, nil, "#1", 1]],
                 entries.map { |e| e.values_at("index", "name", "label", "weight") }
    assert_equal trial.requests, entries.sum { |e| e["requests"] }
    assert(entries.all? { |e| e["requests"].positive? && e["latency_us"]["p50"].positive? }, entries.inspect)
    assert_equal trial.result["status"], entries.map { |e| e["status"] }.reduce { |a, b| a.merge(b) { |_, x, y| x + y } }
    assert_in_delta 1.0, entries.sum { |e| e["share"] }, 1e-9
    assert_equal 1, entries.first["batches"]

    out, err, status = rackbench("report", "--results", results)
    assert status.success?, err
    assert_match(/^\| home +\| +\d+\.\d% \|/, out)
    assert_match(/^\| #1 +\| +\d+\.\d% \|/, out)
  end
end
