# frozen_string_literal: true

require "json"
require "sequel"

# A results database as an older rackbench left it, for the tests of each
# store migration: the schema's first +version+ migrations applied, one
# experiment, a trial "kept", and, with +retried+, a trial "retried" at
# attempt 2 whose failed attempt 1 is in trial_history.
module OldStore
  module_function

  # path :: the SQLite file to create
  # version :: the schema it stops at (Store::Schema::MIGRATIONS.first(version))
  # row :: the trials' columns beyond the common ones (result, proxy, ...)
  # rackbench_version :: the experiment's
  # retried :: whether to store the retried trial and its earlier attempt
  # Yields the open database (to break it, say) before closing it; returns
  # the experiment's id.
  def create(path, version:, row:, rackbench_version:, retried: true)
    db = Sequel.sqlite(path)
    db.create_table(Rackbench::Store::Schema::VERSION_TABLE) { Integer :version, null: false }
    Rackbench::Store::Schema::MIGRATIONS.first(version).each { |migration| migration.call(db) }
    db[Rackbench::Store::Schema::VERSION_TABLE].insert(version: version)
    experiment = db[:experiments].insert(name: "old", fingerprint: "f", created_at: Time.now,
                                         rackbench_version: rackbench_version)
    trial = { experiment_id: experiment, kind: "http", status: "ok", ruby: "ruby", processes: 1, threads: 1,
              dims: JSON.generate("ruby" => "ruby"), **row }
    db[:trials].insert(trial.merge(key: "kept"))
    if retried
      db[:trials].insert(trial.merge(key: "retried", attempt: 2))
      db[:trial_history].insert(trial.merge(key: "retried", attempt: 1, status: "failed", trial_id: 99,
                                            superseded_at: Time.now))
    end
    yield db if block_given?
    db.disconnect
    experiment
  end
end
