# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "support/publish_runs"

# `rackbench prune --older-than AGE`: the trials of old runs deleted, their
# summaries kept, so the published timeline stays whole and its
# regression stays where it was.
describe "rackbench prune" do
  let(:root) { Dir.mktmpdir("rackbench-prune") }
  let(:results) { File.join(root, "results") }
  let(:site) { File.join(root, "site") }
  after { FileUtils.rm_rf(root) }

  # Six runs, the 1-thread configuration 10% slower from run 3; the first
  # four made 400 days ago.
  before do
    Rackbench::Store.open(results) do |store|
      ids = 6.times.map { |i| PublishRuns.store(store, i, rps: [i >= 3 ? 900.0 : 1000.0, 4000.0]) }
      ids.first(4).each_with_index do |id, i|
        store.db[:experiments].where(id: id).update(created_at: Time.now - (400 - i) * 86_400)
      end
    end
  end

  include PublishRuns::Cli

  def timeline
    index = JSON.parse(File.read(File.join(site, "data/index.json")))
    slug = index["testbeds"].first["slug"]
    config = JSON.parse(File.read(File.join(site, "data/#{slug}/testbed.json")))["configs"].first["slug"]
    JSON.parse(File.read(File.join(site, "data/#{slug}/#{config}.json")))
  end

  it "deletes old runs' trials, keeps their medians, and the timeline and its regression stay whole" do
    assert_equal 0, cli("publish", "--results", results, "--out", site)[0]
    before = timeline

    code, out, = cli("prune", "--results", results, "--older-than", "365d", "--dry-run")
    assert_equal 0, code
    assert_match(/\AWould prune 4 runs: 40 trials and 0 earlier attempts deleted/, out)
    code, out, = cli("prune", "--results", results, "--older-than", "365d", "--json")
    assert_equal 0, code
    outcome = JSON.parse(out)
    assert_equal [1, 2, 3, 4, 40], [*outcome["experiments"], outcome["trials"]]

    Rackbench::Store.open(results) do |store|
      assert_equal [5, 6], store.db[:trials].select_map(:experiment_id).uniq.sort
      assert_equal 4, store.db[:run_summaries].exclude(pruned_at: nil).count
      figures = store.db[:series_points].where(experiment_id: 1).select_map(:figure).uniq.sort
      assert_equal %w[memory p50 p90 p99 p99.9 rps], figures, "every figure a run measured is kept"
    end

    assert_equal 0, cli("publish", "--results", results, "--out", site)[0]
    after = timeline
    assert_equal(before["figures"].map { |f| f["points"].map { |p| p && p["median"] } },
                 after["figures"].map { |f| f["points"].map { |p| p && p["median"] } })
    assert_equal [true, true, true, true, false, false], after["runs"].map { |r| r["pruned"] }
    assert_equal before["figures"].first["steps"], after["figures"].first["steps"]
    assert_match(/confirmed/, cli("regressions", "--results", results)[1])
    assert_match(/\APruned 0 runs/, cli("prune", "--results", results, "--older-than", "365d")[1], "pruned once")
  end

  it "refuses an age it cannot read" do
    assert_equal [2, "", "rackbench: --older-than takes Nh, Nd or Nw (90d, 26w, 48h), got '1 year'\n"],
                 cli("prune", "--results", results, "--older-than", "1 year")
    assert_match(/prune needs --older-than AGE/, cli("prune", "--results", results)[2])
  end
end
