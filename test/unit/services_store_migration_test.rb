# frozen_string_literal: true

require "test_helper"
require "support/old_store"
require "json"
require "sequel"

# The services' migration (Trial::Record#services) on a database at the
# schema before it, holding a trial and an earlier attempt: both read back
# with no services; a new trial stores and reads its services, and a
# failed attempt keeps them in the history.
describe "migrating a results database to the services' schema" do
  let(:dir) { Dir.mktmpdir("rackbench-services-migration") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  SERVICES_MIGRATION_RESULT = { "rps" => 800.0, "requests" => 1600, "duration_s" => 2.0, "status" => { "200" => 1600 },
                                "errors" => {} }.freeze
  SERVICES_MIGRATION_DOC = [{ "name" => "postgresql", "program" => "postgres", "version" => "15.18",
                              "env" => "DATABASE_URL", "restore_s" => 0.4, "state" => { "tables" => 3, "rows" => 4050 },
                              "sample" => { "cpu_user_s" => 0.3, "cpu_system_s" => 0.1, "duration_s" => 2.0 } }].freeze

  # The number of migrations before the one that adds trials.services
  # (found by applying them in turn: merged branches renumber them).
  def services_migration_index
    db = Sequel.sqlite
    Rackbench::Store::Schema::MIGRATIONS.each_with_index do |migration, i|
      migration.call(db)
      return i if db.table_exists?(:trials) && db[:trials].columns.include?(:services)
    end
    flunk "no migration adds trials.services"
  ensure
    db&.disconnect
  end

  # A database at the schema just before the services' column.
  def before_services
    OldStore.create(path, version: services_migration_index, rackbench_version: "0.2.0", retried: false,
                          row: { result: JSON.generate(SERVICES_MIGRATION_RESULT) })
  end

  it "reads stored trials back with no services, and stores a new trial's and a failed attempt's" do
    experiment = before_services
    Rackbench::Store.open(dir) do |store|
      assert_equal [["kept", nil]], store.trials.map { |t| [t.key, t.services] }
      record = Rackbench::Trial::Record.new(key: "new", kind: "http", status: "failed", reason: "service died",
                                            result: SERVICES_MIGRATION_RESULT, services: SERVICES_MIGRATION_DOC)
      store.save_trial(experiment, record)
      assert_equal SERVICES_MIGRATION_DOC, store.trials.find { |t| t.key == "new" }.services
      store.save_trial(experiment, record.with(attempt: 2, status: "ok", reason: nil))
      assert_equal [SERVICES_MIGRATION_DOC], store.earlier_attempts(experiment).select { |t| t.key == "new" }.map(&:services)
    end
  end
end
