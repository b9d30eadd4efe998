# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require_relative "../support/postgres_cluster"
require_relative "../support/publish_runs"

# Publish's tables on a real PostgreSQL server (Debian's, started by the
# test): the migration runs there as on SQLite, and the same runs stored
# in PostgreSQL and in a results directory publish the same series, steps
# and regression; states, events, announcements and a prune work there.
describe "publishing a store on PostgreSQL (integration)" do
  CLUSTER = Rackbench::Test::PostgresCluster.new
  Minitest.after_run { CLUSTER.stop }

  let(:dir) { Dir.mktmpdir("rackbench-pg-publish") }
  after { FileUtils.rm_rf(dir) }

  def database
    cluster = CLUSTER.port ? CLUSTER : CLUSTER.start
    @database ||= cluster.create_database("publish_#{Process.pid}_#{rand(1 << 30).to_s(36)}")
  end

  def fill(target)
    Rackbench::Store.open(target) do |store|
      6.times { |i| PublishRuns.store(store, i, rps: [i >= 3 ? 900.0 : 1000.0, 4000.0]) }
    end
  end

  def cli(*argv)
    out = StringIO.new
    err = StringIO.new
    code = Rackbench::CLI.run(argv, out: out, err: err)
    assert_equal 0, code, err.string
    out.string
  end

  def timeline(site)
    index = JSON.parse(File.read(File.join(site, "data/index.json")))
    slug = index["testbeds"].first["slug"]
    doc = JSON.parse(File.read(File.join(site, "data/#{slug}/testbed.json")))
    doc["configs"].map { |c| JSON.parse(File.read(File.join(site, "data/#{slug}/#{c["slug"]}.json"))) }
  end

  it "publishes the same series, steps and regression from PostgreSQL as from SQLite" do
    url = database
    sqlite = File.join(dir, "results")
    fill(url)
    fill(sqlite)
    pg_outcome = JSON.parse(cli("publish", "--store", url, "--out", File.join(dir, "pg-site"), "--json"))
    sqlite_outcome = JSON.parse(cli("publish", "--results", sqlite, "--out", File.join(dir, "sqlite-site"), "--json"))
    assert_equal 1, pg_outcome["created"].size
    keep = %w[figure direction change change_interval state range config_label]
    assert_equal(sqlite_outcome["created"].map { |r| r.slice(*keep).merge("range" => r["range"]["revisions"]) },
                 pg_outcome["created"].map { |r| r.slice(*keep).merge("range" => r["range"]["revisions"]) })
    strip = ->(docs) { docs.map { |d| d["figures"].map { |f| [f["points"], f["steps"], f["noise"]] } } }
    assert_equal strip.call(timeline(File.join(dir, "sqlite-site"))), strip.call(timeline(File.join(dir, "pg-site")))

    cli("regressions", "--store", url, "set", "1", "accepted", "--note", "known", "--by", "ko1")
    shown = JSON.parse(cli("regressions", "--store", url, "show", "1", "--json"))
    assert_equal [%w[accepted ko1], %w[detected state state]], [shown.values_at("state", "state_by"), shown["events"].map { |e| e["event"] }]

    Rackbench::Store.open(url) do |store|
      store.db[:experiments].where(id: [1, 2]).update(created_at: Time.now - 400 * 86_400)
    end
    pruned = JSON.parse(cli("prune", "--store", url, "--older-than", "365d", "--json"))
    assert_equal [1, 2], pruned["experiments"]
    after = JSON.parse(cli("publish", "--store", url, "--out", File.join(dir, "pg-site"), "--json"))
    assert_empty after["created"]
    assert_equal strip.call(timeline(File.join(dir, "sqlite-site"))).map { |f| f.map(&:first) },
                 strip.call(timeline(File.join(dir, "pg-site"))).map { |f| f.map(&:first) }
  end
end
