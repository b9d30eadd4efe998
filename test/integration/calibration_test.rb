# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# Load that fits the app (issue 10): a slow Rails page (rails-posts'
# long-list, about 100 ms), run with no connections or timeout in the
# experiment, succeeds on Puma with 1 and 4 threads and on Unicorn, because
# the timeout follows from a calibration; a page of 150 ms of CPU under the
# same load with the 2 s timeout that suits a fast app fails (16 queued
# requests wait 2.4 s), and says what to change.
describe "load that fits the app (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-calibration") }
  let(:app) { File.expand_path("../fixtures/apps/slow-page", __dir__) }

  after { FileUtils.rm_rf(dir) }

  # app: an experiment's app entry (default: the slow-page fixture).
  def run_experiment(name, load:, servers:, threads:, app: nil)
    app ||= "{ name: slow-page, path: #{self.app}, health: /up, expect_body: slow page }"
    file = File.join(dir, "#{name}.yml")
    File.write(file, <<~YAML)
      name: #{name}
      batches: 1
      rubies: [ruby]
      servers: #{servers}
      apps: [#{app}]
      processes: 1
      threads: #{threads}
      #{"exclude: [{ server: unicorn, threads: 4 }]" if servers.include?("unicorn")}
      load: #{load}
    YAML
    results = File.join(dir, name)
    out, err, status = rackbench("run", file, "--results", results)
    json, = rackbench("report", "--results", results, "--json")
    [status, "#{out}\n#{err}", JSON.parse(json)]
  end

  it "succeeds with no load settings, on Puma (1 and 4 threads) and Unicorn, and fails with a 2 s timeout" do
    status, err, report = run_experiment("calibrated", load: "{ duration: 2s, warmup: 0.5s }", app: "long-list",
                                                       servers: "[puma, unicorn]", threads: "[1, 4]")
    assert status.success?, err
    trials = report.fetch("trials")
    assert_equal 3, trials.size
    trials.each do |trial|
      assert_equal "ok", trial["status"], trial["reason"]
      settings = trial.fetch("load")
      assert_equal 16, settings["connections"], "the experiment's default client"
      calibration = settings.fetch("calibration")
      # The slowest calibration response waited behind the others: with
      # 16 requests always in flight, Little's law gives a mean wait of
      # 16 / throughput, whatever the machine's speed (on a quiet machine
      # long-list takes about 30 ms, on a busy one 100 ms and more).
      queued_us = 16 / calibration["rps"] * 1_000_000
      assert_operator calibration["latency_max_us"], :>=, 0.5 * queued_us, calibration
      assert_operator settings["timeout_s"], :>=, 10 * calibration["latency_max_us"] / 1e6
      assert_equal 0, trial["errors"]
    end

    status, _err, report = run_experiment("fixed", load: "{ duration: 2s, warmup: 0.5s, timeout: 2s }",
                                                   servers: "[puma]", threads: "[1]")
    refute status.success?
    trial = report.fetch("trials").first
    assert_equal "failed", trial["status"]
    assert_nil trial.dig("load", "calibration"), "an explicit timeout is not calibrated"
    assert_match(/requests got no response within the 2.0s timeout at 16 connections: raise load.timeout or lower load.connections/,
                 trial["reason"])
  end

  it "rackbench check: boots each app once, shows the calibration and the load, and names what would fail" do
    file = File.join(dir, "check.yml")
    File.write(file, <<~YAML)
      name: check
      batches: 3
      rubies: [ruby]
      servers: [puma]
      apps:
        - { name: slow-page, path: #{app}, health: /up, expect_body: slow page }
        - { name: wrong-body, path: #{app}, health: /up, expect_body: "a fast page" }
      processes: 1
      threads: [1, 4]
      load: { duration: 2s, warmup: 0.5s }
    YAML
    out, err, status = rackbench("check", file, "--json")
    assert_equal 1, status.exitstatus, err
    document = JSON.parse(out)
    assert_equal [false, "rackbench-check"], document.values_at("ok", "format")
    text = File.read(File.expand_path("../../doc/output.md", __dir__))[/^## The first-run doctor.*/m]
    documented = text.scan(/^\| `examinations\.([a-z0-9_]+)`/).flatten
    assert_equal documented.sort, document["examinations"].first.keys.sort, "doc/output.md lists every key"
    good, bad = document.fetch("examinations").partition { |e| e["config"]["app"] == "slow-page" }
    assert_equal [["ok", 4]], good.map { |e| [e["status"], e["config"]["threads"]] }, "the most threads only"
    calibration = good.first.fetch("calibration")
    assert_equal 16, calibration["connections"]
    assert_operator good.first.dig("load", "timeout_s"), :>=, 10 * calibration["latency_max_us"] / 1e6
    assert_equal "calibration", good.first["timeout_source"]
    assert_operator good.first["boot_s"], :>, 0
    assert_equal ["failed"], bad.map { |e| e["status"] }
    assert_match(/a fast page/, bad.first["reason"])
    kept = err[%r{logs of the check in (\S+)/logs$}, 1]
    assert kept && File.directory?(kept), "a failed check keeps its logs: #{err}"
  ensure
    FileUtils.rm_rf(kept) if kept
  end
end
