# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

describe Rackbench::TrialReport do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  def fill(store)
    id = store.find_or_create_experiment(name: "rep", fingerprint: "f" * 64, seed: 1, batches: 2,
                                         source_text: "name: rep", environment: {})
    base = { ruby: "ruby", server: "puma", app: "rack-hello", processes: 1, threads: 4,
             dims: { "ruby" => "ruby", "server" => "puma", "load.connections" => 8 } }
    store.save_trial(id, base.merge(key: "a#1", batch: 1, position: 1, status: "ok", rps: 1234.5, error_rate: 0.0,
                                    latency_us: { "p50" => 100.0, "p99" => 2500.0 }, rss_peak_bytes: 30_000_000,
                                    pss_peak_bytes: 25_000_000))
    store.save_trial(id, base.merge(key: "a#2", batch: 2, position: 2, status: "failed",
                                    reason: "server not ready after 60s"))
    id
  end

  it "prints a table with varying dimensions as columns and the failures listed" do
    Rackbench::Store.open(dir) do |store|
      fill(store)
      text = Rackbench::TrialReport.new(store).table
      assert_match(/load\.connections/, text)
      assert_match(/1234\.5/, text)
      assert_match(/2\.50ms/, text)
      assert_match(/30\.0 MB/, text)
      assert_match(/#2: server not ready after 60s/, text)
    end
  end

  it "names what is missing" do
    Rackbench::Store.open(dir) do |store|
      error = assert_raises(Rackbench::UsageError) { Rackbench::TrialReport.new(store, name: "nope") }
      assert_match(/no experiment named 'nope'/, error.message)
    end
  end
end

describe "rackbench run/report/servers commands" do
  def run_cli(*argv)
    out = StringIO.new
    err = StringIO.new
    [Rackbench::CLI.run(argv, out: out, err: err), out.string, err.string]
  end

  it "prints the built-in plan with --dry-run" do
    code, out, = run_cli("run", "--dry-run", "--results", Dir.mktmpdir)
    assert_equal 0, code
    assert_match(/Plan for quick .*30 trials/, out)
    assert_match(/server=webrick/, out)
  end

  it "refuses two experiment files and unknown options in one line" do
    assert_equal [2, "", "rackbench: run takes at most one experiment file (see rackbench run --help)\n"],
                 run_cli("run", "a.yml", "b.yml")
    code, _, err = run_cli("run", "--frobnicate")
    assert_equal 2, code
    assert_match(/invalid option: --frobnicate/, err)
    code, _, err = run_cli("run", "/nonexistent/exp.yml", "--dry-run")
    assert_equal 2, code
    assert_equal "rackbench: experiment file not found: /nonexistent/exp.yml\n", err
  end

  it "says there is nothing to report in an empty results directory" do
    code, _, err = run_cli("report", "--results", Dir.mktmpdir)
    assert_equal 2, code
    assert_match(/no results in/, err)
  end

  it "lists the server adapters, as a table and as JSON" do
    code, out, = run_cli("servers")
    assert_equal 0, code
    %w[puma webrick unicorn pitchfork falcon thin iodine agoo].each { |name| assert_match(/\b#{name}\b/, out) }
    code, out, = run_cli("servers", "--json")
    assert_equal 0, code
    puma = JSON.parse(out).find { |s| s["name"] == "puma" }
    assert puma["jruby"]
    assert_equal ['gem "puma"'], puma["gems"]["ruby"]
    assert_equal "puma", puma["server_gem"]
    assert_equal Rackbench::Servers.fetch("puma").option_schema.keys, puma["options"].map { |o| o["key"] }
    assert_equal({ "key" => "preload", "type" => "true or false" }, puma["options"].first.slice("key", "type"))
    assert_empty JSON.parse(out).find { |s| s["name"] == "webrick" }["options"]
  end
end
