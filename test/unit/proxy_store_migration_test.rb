# frozen_string_literal: true

require "test_helper"
require "support/old_store"
require "json"
require "sequel"

# Migration 6 (the proxy's document, Trial::Record#proxy) on a database at
# schema 5 holding a trial and an earlier attempt of another: both read
# back with no proxy, their inside documents intact; a new trial stores
# and reads its proxy; a migration that fails half-way leaves schema 5.
describe "migrating a results database from schema 5" do
  let(:dir) { Dir.mktmpdir("rackbench-proxy-migration") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  PROXY_MIGRATION_RESULT = { "rps" => 800.0, "requests" => 1600, "duration_s" => 2.0, "status" => { "200" => 1600 },
              "errors" => {}, "latency_us" => { "p99" => 700.0 } }.freeze
  PROXY_MIGRATION_INSIDE = { "agent" => "counting", "window" => { "requests" => 1600, "duration_s" => 2.0 }, "processes" => [],
              "missing" => [] }.freeze
  PROXY_MIGRATION_DOC = { "name" => "nginx-cache", "program" => "nginx", "version" => "1.22.1", "port" => 4100,
            "sample" => { "cpu_user_s" => 0.1, "cpu_system_s" => 0.2, "duration_s" => 2.0 },
            "cache" => { "hits" => 1590, "misses" => 10, "uncached" => 0, "statuses" => { "HIT" => 1590, "MISS" => 10 } } }.freeze

  def schema5(&block)
    OldStore.create(path, version: 5, rackbench_version: "0.2.0",
                          row: { result: JSON.generate(PROXY_MIGRATION_RESULT),
                                 inside: JSON.generate(PROXY_MIGRATION_INSIDE) }, &block)
  end

  it "reads stored trials and earlier attempts back with no proxy, and stores a new trial's" do
    experiment = schema5
    Rackbench::Store.open(dir) do |store|
      assert_equal Rackbench::Store::Schema::VERSION, store.db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      trials = store.trials
      assert_equal [["kept", 800.0, PROXY_MIGRATION_INSIDE, nil], ["retried", 800.0, PROXY_MIGRATION_INSIDE, nil]],
                   trials.map { |t| [t.key, t.rate, t.inside, t.proxy] }.sort_by(&:first)
      assert_equal [["retried", 1, nil]], store.earlier_attempts(experiment).map { |t| [t.key, t.attempt, t.proxy] }

      # A proxy that died in the window: a failed trial keeps what its proxy measured.
      record = Rackbench::Trial::Record.new(key: "new", kind: "http", status: "failed", reason: "proxy died",
                                            result: PROXY_MIGRATION_RESULT, proxy: PROXY_MIGRATION_DOC)
      store.save_trial(experiment, record)
      assert_equal PROXY_MIGRATION_DOC, store.trials.find { |t| t.key == "new" }.proxy
      # Retried, the failed attempt keeps its proxy in the history.
      store.save_trial(experiment, record.with(attempt: 2, status: "ok", reason: nil))
      assert_equal [PROXY_MIGRATION_DOC], store.earlier_attempts(experiment).select { |t| t.key == "new" }.map(&:proxy)
    end
  end

  it "leaves the database at schema 5, every row as it was, when the migration fails half-way" do
    schema5 { |db| db.alter_table(:trial_history) { add_column :proxy, String } }
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/proxy/, error.message)
    Sequel.sqlite(path) do |db|
      assert_equal 5, db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      refute_includes db[:trials].columns, :proxy
      assert_equal [["kept", JSON.generate(PROXY_MIGRATION_RESULT)], ["retried", JSON.generate(PROXY_MIGRATION_RESULT)]],
                   db[:trials].order(:key).select_map(%i[key result])
    end
  end
end
