# frozen_string_literal: true

require "test_helper"
require "json"
require "sequel"

# Migration 3 (one trial record) on databases at schema 2 holding every
# kind of row an earlier rackbench or a hand could write: a micro-benchmark
# trial, an HTTP app whose name starts with "micro-", a trial with no app,
# figures held only in the copied columns; and a migration that fails
# half-way leaves the database as it was.
describe "migrating a results database from schema 2" do
  let(:dir) { Dir.mktmpdir("rackbench-migration") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  ENGINE_DOC = { "rps" => 500.0, "requests" => 1000, "duration_s" => 2.0, "status" => { "200" => 1000 },
                 "errors" => { "read" => 0 }, "latency_us" => { "p99" => 900.0 },
                 "warmup" => { "duration_s" => 1.0 } }.freeze
  MICRO_DOC = { "format" => "rackbench-micro-fibers", "status" => "ok", "messages" => 40,
                "messages_per_s" => 2000.0, "measured_s" => 0.02, "setup_s" => 0.004, "teardown_s" => 0.001,
                "rss_peak_bytes" => 20_000_000, "pss_end_bytes" => 12_000_000 }.freeze

  # A database at schema 2, as rackbench wrote it before migration 3.
  def schema2(&rows)
    db = Sequel.sqlite(path)
    db.create_table(Rackbench::Store::Schema::VERSION_TABLE) { Integer :version, null: false }
    Rackbench::Store::Schema::MIGRATIONS.first(2).each { |migration| migration.call(db) }
    db[Rackbench::Store::Schema::VERSION_TABLE].insert(version: 2)
    experiment = db[:experiments].insert(name: "old", fingerprint: "f", created_at: Time.now,
                                         rackbench_version: "0.1.0")
    rows.call(db[:trials], experiment)
    db.disconnect
  end

  def row(experiment, key, **columns)
    { experiment_id: experiment, key: key, status: "ok", ruby: "ruby", processes: 1, threads: 1,
      dims: JSON.generate("ruby" => "ruby"), **columns }
  end

  def trials
    Rackbench::Store.open(dir) { |store| store.trials.to_h { |t| [t.key, t] } }
  end

  it "tells a micro-benchmark's trial by what only it can be, and reads every trial's figures back" do
    schema2 do |table, experiment|
      table.insert(row(experiment, "micro", app: "micro-fibers", server: "processes", rps: 2000.0, requests: 40,
                                            boot_s: 0.004, stop_s: 0.001, rss_peak_bytes: 20_000_000,
                                            pss_peak_bytes: 12_000_000, engine_result: JSON.generate(MICRO_DOC)))
      table.insert(row(experiment, "micro-named-app", app: "micro-api", server: "puma", rps: 500.0, boot_s: 1.5,
                                                      engine_result: JSON.generate(ENGINE_DOC),
                                                      sampler: JSON.generate("pss_peak_bytes" => 7)))
      table.insert(row(experiment, "no-app", app: nil, server: "puma", engine_result: JSON.generate(ENGINE_DOC)))
    end
    by_key = trials
    micro = by_key.fetch("micro")
    assert_equal ["script", 2000.0, 40, 12_000_000, nil, nil], [micro.kind, micro.rate, micro.requests,
                                                                micro.pss_peak_bytes, micro.boot_s, micro.stop_s]
    named = by_key.fetch("micro-named-app")
    assert_equal ["http", 500.0, 1000, 7, 1.5], [named.kind, named.rate, named.requests, named.pss_peak_bytes,
                                                named.boot_s]
    assert_equal ["http", 500.0], [by_key.fetch("no-app").kind, by_key.fetch("no-app").rate]
  end

  it "keeps figures that were only in the copied columns, CPU time included" do
    schema2 do |table, experiment|
      table.insert(row(experiment, "columns-only", app: "hello", server: "puma", rps: 321.0, requests: 642,
                                                   errors: 3, measure_s: 2.0, warmup_s: 0.5,
                                                   latency_us: JSON.generate("p99" => 1500.0), cpu_user_s: 1.25,
                                                   cpu_system_s: 0.5))
    end
    record = trials.fetch("columns-only")
    assert_equal [321.0, 642, 3, 2.0, 0.5, { "p99" => 1500.0 }],
                 [record.rate, record.requests, record.failed_requests, record.measure_s, record.warmup_s,
                  record.latency_us]
    assert_equal [1.25, 0.5, nil], [record.cpu_user_s, record.cpu_system_s, record.rss_peak_bytes]
  end

  it "leaves the database at schema 2, every row as it was, when the migration fails half-way" do
    schema2 do |table, experiment|
      table.insert(row(experiment, "kept", app: "hello", server: "puma", rps: 500.0,
                                           engine_result: JSON.generate(ENGINE_DOC)))
    end
    # A column the migration is about to add: it fails after its first steps.
    Sequel.sqlite(path) { |db| db.alter_table(:trials) { add_column :kind, String } }
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/kind/, error.message)
    Sequel.sqlite(path) do |db|
      assert_equal 2, db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      kept = db[:trials].first
      assert_equal [500.0, JSON.generate(ENGINE_DOC)], kept.values_at(:rps, :engine_result)
    end
  end
end
