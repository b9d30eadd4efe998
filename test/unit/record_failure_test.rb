# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "support/publish_runs"

# A run that could not start (a build that failed), recorded with
# `rackbench record-failure` (Publish::FailedRun): stored labelled as its
# run would have been, drawn by publish as a failed run between the
# measured ones, never as a step.
describe "rackbench record-failure" do
  let(:root) { Dir.mktmpdir("rackbench-record-failure") }
  let(:results) { File.join(root, "results") }
  let(:site) { File.join(root, "site") }
  let(:experiment) do
    File.join(root, "bench.yml").tap do |path|
      File.write(path, "name: bench\nbatches: 5\nservers: [puma]\napps: [rack-hello]\nprocesses: 1\nthreads: 1\n")
    end
  end
  after { FileUtils.rm_rf(root) }

  include PublishRuns::Cli

  it "stores the night as a failed run of its experiment, which the timeline shows as failed" do
    Rackbench::Store.open(results) do |store|
      3.times { |i| PublishRuns.store(store, i) }
      id = Rackbench::Publish::FailedRun.record(store, experiment, given: { "branch" => "main", "night" => "4" },
                                                                   reason: "make failed (exit status 2)", log: "/var/log/build.log",
                                                                   environment: PublishRuns::MACHINE)
      run = store.runs(id).last
      assert_equal "failed", run[:status]
      assert_equal({ "stage" => "build", "reason" => "make failed (exit status 2)", "log" => "/var/log/build.log" },
                   run[:environment]["failure"])
      assert_equal({ "branch" => "main", "night" => "4" }, store.experiment(id)[:labels]["given"])
      2.times { |i| PublishRuns.store(store, 3 + i) }
    end
    assert_equal 0, cli("publish", "--results", results, "--out", site)[0]
    index = JSON.parse(File.read(File.join(site, "data/index.json")))
    testbed = index["testbeds"].find { |t| t["experiment"] == "bench" }
    assert_equal 1, testbed["failed_runs"]
    doc = JSON.parse(File.read(File.join(site, "data/#{testbed["slug"]}/testbed.json")))
    assert_equal %w[measured measured measured failed measured measured], doc["runs"].map { |r| r["status"] }
    assert_equal "make failed (exit status 2)", doc["runs"][3]["failure"]["reason"]
    config = doc["configs"].first["slug"]
    assert_includes File.read(File.join(site, "#{testbed["slug"]}/#{config}.html")), "failed: make failed (exit status 2)"
    timeline = JSON.parse(File.read(File.join(site, "data/#{testbed["slug"]}/#{config}.json")))
    assert_nil timeline["figures"].first["points"][3]
    assert_empty timeline["figures"].flat_map { |f| f["steps"] }
  end

  it "needs a reason and one experiment file" do
    assert_match(/record-failure needs --reason TEXT/, cli("record-failure", experiment, "--results", results)[2])
    assert_match(/record-failure takes one experiment file/, cli("record-failure", "--reason", "x", "--results", results)[2])
    assert_match(/experiment file not found: .*none\.yml/,
                 cli("record-failure", File.join(root, "none.yml"), "--reason", "x", "--results", results)[2])
  end
end
