# frozen_string_literal: true

require "test_helper"
require "json"
require "sequel"

# Migration 7 (experiments.labels) on a database at schema 6 holding an
# experiment and a trial: the experiment reads back without labels, under
# the fingerprint it had (a resumed run finds it), its trial intact; a new
# labelled experiment stores its labels; a migration that fails half-way
# leaves schema 6.
describe "migrating a results database from schema 6" do
  let(:dir) { Dir.mktmpdir("rackbench-labels-migration") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  LABELS_MIGRATION_RESULT = { "rps" => 800.0, "requests" => 1600, "duration_s" => 2.0, "status" => { "200" => 1600 },
                              "errors" => {}, "latency_us" => { "p99" => 700.0 } }.freeze

  def schema6
    db = Sequel.sqlite(path)
    db.create_table(Rackbench::Store::Schema::VERSION_TABLE) { Integer :version, null: false }
    Rackbench::Store::Schema::MIGRATIONS.first(6).each { |migration| migration.call(db) }
    db[Rackbench::Store::Schema::VERSION_TABLE].insert(version: 6)
    experiment = db[:experiments].insert(name: "old", fingerprint: "f" * 64, created_at: Time.now,
                                         rackbench_version: "0.2.0", seed: 1, batches: 1, source_text: "")
    db[:trials].insert(experiment_id: experiment, key: "kept", kind: "http", status: "ok", ruby: "ruby",
                       dims: JSON.generate("ruby" => "ruby"), result: JSON.generate(LABELS_MIGRATION_RESULT))
    yield db if block_given?
    db.disconnect
    experiment
  end

  it "keeps stored experiments without labels and under their fingerprint, and stores new ones' labels" do
    experiment = schema6
    Rackbench::Store.open(dir) do |store|
      assert_equal Rackbench::Store::Schema::VERSION, store.db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      assert_nil store.experiment(experiment)[:labels]
      assert_equal experiment, store.find_or_create_experiment(name: "old", fingerprint: "f" * 64, seed: 1, batches: 1,
                                                               source_text: "", environment: nil),
                   "a resumed run of it finds it"
      assert_equal [["kept", 800.0]], store.trials(experiment).map { |t| [t.key, t.rate] }
      labels = Rackbench::Labels.new(given: { "branch" => "main" }, revisions: [])
      id = store.find_or_create_experiment(name: "old", fingerprint: labels.fingerprint("f" * 64), seed: 1, batches: 1,
                                           source_text: "", environment: nil, labels: labels.to_h)
      refute_equal experiment, id
      assert_equal({ "given" => { "branch" => "main" }, "revisions" => [] }, store.experiment(id)[:labels])
    end
  end

  it "leaves the database at schema 6, every row as it was, when the migration fails half-way" do
    schema6 { |db| db.alter_table(:experiments) { add_column :labels, String } }
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/labels/, error.message)
    Sequel.sqlite(path) do |db|
      assert_equal 6, db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      assert_equal [["kept", JSON.generate(LABELS_MIGRATION_RESULT)]], db[:trials].select_map(%i[key result])
    end
  end
end
