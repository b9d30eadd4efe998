# frozen_string_literal: true

require "test_helper"
require "support/old_store"
require "json"
require "sequel"

# Migration 5 (the counting agent's document, Trial::Record#inside) on a
# database at schema 4 holding a trial and an earlier attempt of another:
# both read back with no inside document, a new trial stores and reads its
# own, and a migration that fails half-way leaves schema 4 as it was.
describe "migrating a results database from schema 4" do
  let(:dir) { Dir.mktmpdir("rackbench-inside-migration") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  RESULT = { "rps" => 500.0, "requests" => 1000, "duration_s" => 2.0, "status" => { "200" => 1000 },
             "errors" => {}, "latency_us" => { "p99" => 900.0 } }.freeze
  INSIDE = { "agent" => "counting", "window" => { "requests" => 1000, "duration_s" => 2.0 },
             "processes" => [{ "pid" => 7, "role" => "single", "allocated_objects" => 21_000 }],
             "missing" => [] }.freeze

  # A database at schema 4, as rackbench wrote it before migration 5.
  def schema4(&block)
    OldStore.create(path, version: 4, rackbench_version: "0.1.0", row: { result: JSON.generate(RESULT) }, &block)
  end

  it "reads every stored trial and earlier attempt back with no inside document, and stores new ones" do
    experiment = schema4
    Rackbench::Store.open(dir) do |store|
      assert_equal Rackbench::Store::Schema::VERSION, store.db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      trials = store.trials
      assert_equal [["kept", 500.0, nil], ["retried", 500.0, nil]], trials.map { |t| [t.key, t.rate, t.inside] }.sort
      earlier = store.earlier_attempts(experiment)
      assert_equal [["retried", 1, nil]], earlier.map { |t| [t.key, t.attempt, t.inside] }

      record = Rackbench::Trial::Record.new(key: "new", kind: "http", status: "ok", result: RESULT, inside: INSIDE)
      store.save_trial(experiment, record)
      assert_equal INSIDE, store.trials.find { |t| t.key == "new" }.inside
    end
  end

  it "leaves the database at schema 4, every row as it was, when the migration fails half-way" do
    # A column the migration is about to add to its second table: it fails
    # after its first step, which must be undone.
    schema4 { |db| db.alter_table(:trial_history) { add_column :inside, String } }
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/inside/, error.message)
    Sequel.sqlite(path) do |db|
      assert_equal 4, db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      refute_includes db[:trials].columns, :inside
      assert_equal [["kept", JSON.generate(RESULT)], ["retried", JSON.generate(RESULT)]],
                   db[:trials].order(:key).select_map(%i[key result])
    end
  end
end
