# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "tmpdir"

# The load named is the load applied (issue 21): WEBrick with one thread
# keeps one keep-alive connection and leaves the other 15 of 16 waiting
# until they time out; the engine counts the slots served, and the report
# flags the batch with the likely cause. Puma with one thread serves all 16
# (its reactor holds idle connections apart from its threads): no flag.
describe "unserved connections (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-unserved") }

  after { FileUtils.rm_rf(dir) }

  it "flags WEBrick 1x1 at 16 connections with its cause, and not Puma 1x1" do
    file = File.join(dir, "unserved.yml")
    File.write(file, <<~YAML)
      name: unserved
      batches: 1
      rubies: [ruby]
      servers: [puma, webrick]
      apps: [rack-hello]
      processes: 1
      threads: 1
      # A timeout longer than warmup and window: the waiting connections
      # never time out, so no error rate (which would follow WEBrick's
      # speed on a loaded machine) can fail the trial; the slots served say it.
      load: { connections: 16, duration: 2s, warmup: 1s, timeout: 10s }
    YAML
    results = File.join(dir, "results")
    out, err, status = rackbench("run", file, "--results", results)
    assert status.success?, "#{out}#{err}"
    json, = rackbench("report", "--results", results, "--json")
    report = JSON.parse(json)
    by_server = report.fetch("configs").to_h { |c| [c["dims"]["server"], c] }

    webrick = by_server.fetch("webrick")["flags"].find { |f| f["kind"] == "unserved_connections" }
    assert webrick, by_server["webrick"]["flags"].inspect
    assert_match(/\Abatch 1: only 1 of 16 connections was served in the window \(the longest wait \d+\.\ds\): WEBrick serves one keep-alive connection per thread \(1 thread\)/,
                 webrick["message"])
    puma = by_server.fetch("puma")["flags"].map { |f| f["kind"] }
    refute_includes puma, "unserved_connections"
    refute_includes puma, "warmup_errors"

    # The engine's own count, stored with each trial.
    trials = report.fetch("trials").to_h { |t| [t["server"], t] }
    assert_equal "ok", trials["webrick"]["status"], trials["webrick"]["reason"]
    text, = rackbench("report", "--results", results)
    assert_match(/\| webrick .*c.* \|$/, text)
    assert_includes text, "webrick: batch 1: only 1 of 16 connections was served"
  end
end
