# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "rackbench/store"

# Store::Template: a new results database copied from one migrated once
# is the database the migrations make in place; the template never
# replaces a file, nor lets a store that may not create the schema
# (upgrade: false) find one. The tests' own stores start from it
# (test/support/store_template.rb).
describe Rackbench::Store::Template do
  let(:tmp) { Dir.mktmpdir("rackbench-store-template-test") }
  after do
    Rackbench::Store::Template.enable(Rackbench::Test::STORE_TEMPLATE_DIR)
    FileUtils.rm_rf(tmp)
  end

  # What a database is made of, as SQLite says: every table, index and
  # trigger with the statement that made it, the version row and the
  # journal mode (kept in the file's header).
  def anatomy(dir)
    Rackbench::Store.open(dir) do |store|
      db = store.db
      { "objects" => db.fetch("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").all,
        "version" => db[:rackbench_schema].select_map(:version),
        "journal_mode" => db.fetch("PRAGMA journal_mode").single_value,
        "rows" => db.tables.to_h { |table| [table, db[table].count] } }
    end
  end

  it "gives a new results directory the database that the migrations make in place" do
    Rackbench::Store::Template.enable(File.join(tmp, "template"))
    FileUtils.mkdir_p(File.join(tmp, "template"))
    copied = anatomy(File.join(tmp, "copied"))
    assert File.file?(File.join(tmp, "template", Rackbench::Store::Template::FILE)), "the copy came from the template"

    Rackbench::Store::Template.disable
    refute Rackbench::Store::Template.enabled?
    migrated = anatomy(File.join(tmp, "migrated"))

    assert_equal migrated, copied
    assert_equal [Rackbench::Store::Schema::VERSION], copied["version"]
    assert_equal "wal", copied["journal_mode"]
    assert_operator copied["objects"].size, :>, 10
    assert_equal({ rackbench_schema: 1 }, copied["rows"].reject { |_, count| count.zero? },
                 "an empty database but for the version row")
  end

  it "stores into a copy and keeps what it stored, as a migrated database does" do
    assert Rackbench::Store::Template.enabled?, "the tests' stores start from the template"
    dir = File.join(tmp, "results")
    Rackbench::Store.open(dir) do |store|
      store.find_or_create_experiment(name: "copy", fingerprint: "fp", seed: 1, batches: 1, source_text: "",
                                      environment: {})
    end
    assert_equal ["copy"], Rackbench::Store.open(dir) { |store| store.experiments.map { |e| e[:name] } }
    assert_empty Dir.children(dir).grep(/template/), "no partial copy left beside it"
  end

  it "never replaces a file that is already there" do
    dir = File.join(tmp, "other")
    FileUtils.mkdir_p(dir)
    db = Sequel.sqlite(File.join(dir, "results.db"))
    db.create_table(:notes) { String :text }
    db.disconnect
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/is not a rackbench results database \(it holds other tables: notes\)/, error.message)
    refute Rackbench::Store::Template.copy_to(File.join(dir, "results.db"))
  end

  it "gives nothing to a store that may not create the schema (upgrade: false), which still refuses an empty one" do
    dir = File.join(tmp, "empty")
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir, upgrade: false) }
    assert_match(/holds no rackbench results yet/, error.message)
  end

  it "copies nothing while off" do
    Rackbench::Store::Template.disable
    path = File.join(tmp, "results.db")
    refute Rackbench::Store::Template.copy_to(path)
    refute File.exist?(path)
  end
end
