# frozen_string_literal: true

require "test_helper"
require "support/old_store"
require "json"
require "sequel"

# The migration of what `rackbench publish` keeps (run summaries, series
# points, regressions and their events) on a database at the schema
# before it: its experiment and trial read back as before, publish
# summarises them and stores a regression with its events, and a
# migration that fails half-way leaves the database as it was.
describe "migrating a results database to publish's schema" do
  let(:dir) { Dir.mktmpdir("rackbench-publish-migration") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  PUBLISH_MIGRATION_RESULT = { "rps" => 800.0, "requests" => 1600, "duration_s" => 2.0, "status" => { "200" => 1600 },
                               "errors" => {}, "latency_us" => { "p99" => 900.0 } }.freeze

  # The number of migrations before the one that creates the regressions
  # (found by applying them in turn: merged branches renumber them).
  def publish_migration_index
    db = Sequel.sqlite
    Rackbench::Store::Schema::MIGRATIONS.each_with_index do |migration, i|
      migration.call(db)
      return i if db.table_exists?(:regressions)
    end
    flunk "no migration creates the regressions table"
  ensure
    db&.disconnect
  end

  def before_publish(&block)
    OldStore.create(path, version: publish_migration_index, rackbench_version: "0.2.0", retried: false,
                          row: { result: JSON.generate(PUBLISH_MIGRATION_RESULT), dims: JSON.generate("ruby" => "ruby"),
                                 batch: 1 }, &block)
  end

  it "keeps the stored trials, then holds run summaries, points and regressions" do
    experiment = before_publish
    Rackbench::Store.open(dir) do |store|
      assert_equal [["kept", 800.0]], store.trials.map { |t| [t.key, t.rate] }
      points = Rackbench::Publish::Points.new(store, Rackbench::Publish::Settings.new)
      assert_equal 1, points.refresh
      assert_equal %w[p99 rps], points.for([experiment])[experiment].map(&:figure).sort
      assert_equal "measured", points.summaries[experiment].status

      regressions = Rackbench::Regressions.new(store)
      columns = { series: "s", experiment: "old", machine: "{}", config_id: "ruby=ruby", figure: "rps",
                  detected_experiment_id: experiment, step_experiment_id: experiment, bad_experiment_id: experiment,
                  direction: "down", change: -0.1 }
      id = regressions.insert(columns, state: "detected", note: "found")
      regressions.set(id, "accepted", by: "ko1", note: "the price of a feature")
      assert_equal [%w[detected detected rackbench\ publish], %w[state accepted ko1]],
                   regressions.find(id).events.map { |e| e.values_at("event", "state", "by") }
    end
  end

  it "leaves the database at the schema before when the migration fails half-way" do
    before_publish { |db| db.create_table(:regressions) { primary_key :id } }
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/regressions/, error.message)
    db = Sequel.sqlite(path)
    assert_equal publish_migration_index, db[:rackbench_schema].get(:version)
    refute db.table_exists?(:run_summaries), "the migration's first table was rolled back"
  ensure
    db&.disconnect
  end
end
