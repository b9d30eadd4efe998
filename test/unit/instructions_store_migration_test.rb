# frozen_string_literal: true

require "test_helper"
require "support/old_store"
require "json"
require "sequel"

# Migration 10 (an instructions trial's counts, Trial::Record#instructions)
# on a database at schema 9 holding a trial and an earlier attempt of
# another: both read back with no counts, their proxy documents intact; a
# new trial stores and reads its counts, and a failed attempt keeps them in
# the history; a migration that fails half-way leaves schema 9.
describe "migrating a results database from schema 9 to 10" do
  let(:dir) { Dir.mktmpdir("rackbench-instructions-migration") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  INSTRUCTIONS_MIGRATION_RESULT = { "rps" => 80.0, "requests" => 2000, "duration_s" => 25.0, "status" => { "200" => 2000 }, "errors" => {},
              "latency_us" => { "p99" => 9000.0 } }.freeze
  INSTRUCTIONS_MIGRATION_PROXY = { "name" => "nginx", "program" => "nginx", "version" => "1.22.1", "cache" => nil }.freeze
  INSTRUCTIONS_MIGRATION_COUNTS = { "tool" => "callgrind", "valgrind" => "3.19.0", "requests" => 2000, "instructions" => 386_275_696,
             "per_request" => 193_137.848, "processes" => [{ "pid" => 1, "role" => "main", "program" => "ruby3.1 puma",
                                                              "instructions" => 386_275_696, "per_request" => 193_137.848 }],
             "functions" => [] }.freeze

  def schema9(&block)
    OldStore.create(path, version: 9, rackbench_version: "0.3.0",
                          row: { result: JSON.generate(INSTRUCTIONS_MIGRATION_RESULT),
                                 proxy: JSON.generate(INSTRUCTIONS_MIGRATION_PROXY) }, &block)
  end

  it "reads stored trials back with no counts, and stores a new trial's" do
    experiment = schema9
    Rackbench::Store.open(dir) do |store|
      assert_operator store.db[Rackbench::Store::Schema::VERSION_TABLE].get(:version), :>=, 10
      assert_equal [["kept", INSTRUCTIONS_MIGRATION_PROXY, nil], ["retried", INSTRUCTIONS_MIGRATION_PROXY, nil]],
                   store.trials.map { |t| [t.key, t.proxy, t.instructions] }.sort_by(&:first)
      record = Rackbench::Trial::Record.new(key: "new#instructions", kind: "http", status: "failed",
                                            reason: "instructions: valgrind: process 12 did not take 'dump'",
                                            result: INSTRUCTIONS_MIGRATION_RESULT, instructions: INSTRUCTIONS_MIGRATION_COUNTS)
      store.save_trial(experiment, record)
      assert_equal INSTRUCTIONS_MIGRATION_COUNTS, store.trials.find { |t| t.key == "new#instructions" }.instructions
      store.save_trial(experiment, record.with(attempt: 2, status: "ok", reason: nil))
      assert_equal [INSTRUCTIONS_MIGRATION_COUNTS], store.earlier_attempts(experiment).select { |t| t.key == "new#instructions" }.map(&:instructions)
    end
  end

  it "leaves the database at schema 9, every row as it was, when the migration fails half-way" do
    schema9 { |db| db.alter_table(:trial_history) { add_column :instructions, String } }
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/instructions/, error.message)
    Sequel.sqlite(path) do |db|
      assert_equal 9, db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      refute_includes db[:trials].columns, :instructions
      assert_equal [["kept", JSON.generate(INSTRUCTIONS_MIGRATION_PROXY)], ["retried", JSON.generate(INSTRUCTIONS_MIGRATION_PROXY)]],
                   db[:trials].order(:key).select_map(%i[key proxy])
    end
  end
end
