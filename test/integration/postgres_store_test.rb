# frozen_string_literal: true

require "test_helper"
require "open3"
require "stringio"
require_relative "../support/postgres_cluster"
require_relative "../fixtures/fakes"
require_relative "../fixtures/capacity_support"
require "rackbench/cli/capacity_command"

# The results store on a real PostgreSQL server (Debian's, started by the
# test: Test::PostgresCluster): the same schema and migrations as SQLite,
# the v0.1 results copied over with `rackbench store copy`, and a golden
# comparison: report, compare, capacity and resume print the same figures
# from PostgreSQL as from SQLite for the same stored trials. Then the
# one-line errors: a bad URL, a server that is down, a schema too old or
# too new, a database that is not rackbench's.
describe "the results store on PostgreSQL" do
  include Rackbench::Test::CapacitySupport

  FIXTURE_DB = File.expand_path("../fixtures/stores/v0.1-results.db", __dir__)
  CLUSTER = Rackbench::Test::PostgresCluster.new
  Minitest.after_run { CLUSTER.stop }

  let(:dir) { Dir.mktmpdir("rackbench-pg-store") }
  let(:sqlite_dir) { File.join(dir, "sqlite").tap { |d| FileUtils.mkdir_p(d) } }
  after { FileUtils.rm_rf(dir) }

  def cluster
    CLUSTER.port ? CLUSTER : CLUSTER.start
  end

  # A database of its own for each test.
  def database
    @database ||= cluster.create_database("t#{Process.pid}_#{name.hash.abs.to_s(36)}_#{rand(1 << 30).to_s(36)}")
  end

  def v01_results
    FileUtils.cp(FIXTURE_DB, File.join(sqlite_dir, "results.db"))
    sqlite_dir
  end

  # The report's text without the place its trials were read from.
  def placeless(text, *locations)
    text = JSON.generate(text) unless text.is_a?(String)
    locations.reduce(text) { |t, location| t.gsub(location, "STORE") }
  end

  it "creates the schema, stores a trial and reads back the same record" do
    Rackbench::Store.open(database) do |store|
      assert store.postgres?
      assert_equal Rackbench::Store::Schema::VERSION, store.db[:rackbench_schema].get(:version)
      # No varchar(255) left: a trial key longer than that is stored whole.
      assert(store.db.schema(:trials).none? { |_, info| info[:db_type] == "character varying(255)" })
      id = store.find_or_create_experiment(name: "pg", fingerprint: "f", seed: 1, batches: 1, source_text: "x",
                                           environment: { "a" => 1 })
      assert_equal id, store.find_or_create_experiment(name: "pg", fingerprint: "f", seed: 1, batches: 1,
                                                       source_text: "x", environment: {})
      record = Rackbench::Trial::Record.new(key: "k" * 400, batch: 1, kind: "http", status: "ok",
                                            dims: { "ruby" => "ruby" }, result: Fakes::ENGINE_RESULT,
                                            started_at: Time.now, host: "bench-1", network: { "rtt_us" => 1000 })
      store.save_trial(id, record)
      assert_equal record, store.trials(id).first
      assert_raises(Rackbench::Store::DuplicateTrial) { store.save_trial(id, record) }
    end
  end

  # Golden: every view of report and compare, from the copy, is the
  # SQLite original's, figure for figure.
  it "copies the v0.1 results over and reports and compares the same figures" do
    sqlite = v01_results
    out = assert_rackbench("store", "copy", sqlite, database)
    assert_match(/11 trials, 0 earlier attempts, \d+ runs copied/, out)
    assert_match(/0 trials, 0 earlier attempts, 0 runs added/, assert_rackbench("store", "copy", sqlite, database),
                 "a second copy adds nothing")
    sqlite_location = File.join(File.expand_path(sqlite), "results.db")
    [[], ["--csv"], ["--json"], ["--trials"], ["--history"]].each do |view|
      from_sqlite = assert_rackbench("report", "--results", sqlite, *view)
      from_pg = assert_rackbench("report", "--store", database, *view)
      from_sqlite, from_pg = [from_sqlite, from_pg].map { |doc| JSON.parse(doc).except("generated_at") } if view == ["--json"]
      assert_equal placeless(from_sqlite, sqlite_location), placeless(from_pg, database), "report #{view.join}"
    end
    # The variable is the same as --store.
    assert_equal assert_rackbench("report", "--store", database, "--csv"),
                 assert_rackbench("report", "--csv", env: { "RACKBENCH_STORE" => database })
    specs = JSON.parse(assert_rackbench("report", "--results", sqlite, "--json"))["configs"].map { |c| c["label"] }
    refute_empty specs
    compare_sqlite = assert_rackbench("compare", "--results", sqlite, "--json", "ruby=ruby", "ruby=ruby-yjit")
    compare_pg = assert_rackbench("compare", "--store", database, "--json", "ruby=ruby", "ruby=ruby-yjit")
    assert_equal JSON.parse(compare_sqlite), JSON.parse(compare_pg)
  end

  # Golden: a run interrupted on SQLite, copied, then resumed on both
  # with the same fakes: the same trials, the same figures.
  it "resumes on PostgreSQL as on SQLite" do
    experiment = Rackbench::Experiment.parse(<<~YAML, source: "resume.yml", base_dir: dir)
      name: pg-resume
      seed: 5
      batches: 3
      servers: [puma]
      apps: [rack-hello]
      processes: [1, 2]
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
    runner = lambda do |store, engine|
      Rackbench::Runner.new(source: experiment, results_dir: sqlite_dir, store: store, resume: true, out: StringIO.new,
                            err: StringIO.new, installs: [Fakes.install],
                            layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                            environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                            watchdog: Fakes::Watchdog.new,
                            collaborators: { engine: engine, launcher: Fakes::Launcher.new, bundles: Fakes::Bundles.new,
                                             companions: Fakes.companions })
    end
    assert_raises(Rackbench::Interrupted) { runner.call(nil, VaryingEngine.new(interrupt_at: 4)).run }
    assert_rackbench("store", "copy", sqlite_dir, database)
    runner.call(nil, VaryingEngine.new).run
    runner.call(database, VaryingEngine.new).run
    documents = [sqlite_dir, database].map do |store|
      Rackbench::Store.open(store) { |s| Rackbench::Report.new(s, name: "pg-resume").to_h }
    end
    assert_equal documents.first["configs"], documents.last["configs"]
    assert_equal [6, 6], documents.map { |doc| doc["trials"].size }
    keys = documents.map { |doc| doc["trials"].map { |t| [t["key"], t["rps"]] } }
    assert_equal keys.first, keys.last
    assert_operator documents.first["configs"].map { |c| c["rps_median"] }.uniq.size, :>, 1, "the figures differ by configuration"
  end

  # Golden: a capacity search stored on SQLite, copied, replayed with
  # --resume from each store: the same answers.
  it "replays a stored capacity search from PostgreSQL as from SQLite" do
    file = File.join(dir, "cap.yml")
    File.write(file, <<~YAML)
      name: pg-cap
      servers: [puma]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s, connections: 64 }
      capacity: { p99: 50ms, start_rate: 100, resolution: 10%, confirmations: 1 }
    YAML
    capacity = lambda do |engine, *args|
      out = StringIO.new
      command = Rackbench::CLI::CapacityCommand.new(
        out: out, err: StringIO.new, steps: ->(d, o, e, s) { fake_steps(engine, d, out: o, err: e, store: s) }
      )
      [command.run([file, *args, "--json"]), out.string]
    end
    engine = Rackbench::Test::CapacitySupport::CeilingEngine.new(ceiling: 300)
    code, = capacity.call(engine, "--results", sqlite_dir)
    assert_equal Rackbench::CLI::EXIT_OK, code
    assert_rackbench("store", "copy", sqlite_dir, database)
    replay = Rackbench::Test::CapacitySupport::CeilingEngine.new(ceiling: 300)
    _, from_sqlite = capacity.call(replay, "--results", sqlite_dir, "--resume")
    _, from_pg = capacity.call(replay, "--results", File.join(dir, "logs-pg"), "--store", database, "--resume")
    assert_equal 0, replay.calls, "every step was stored: nothing ran again"
    assert_equal JSON.parse(from_sqlite)["configs"], JSON.parse(from_pg)["configs"]
  end

  it "refuses a bad URL, a server that is down, and a schema too old or too new, in one line" do
    url = database
    _, err, status = rackbench("report", "--store", "postgres://#{cluster.port}")
    refute status.success?
    assert_equal "rackbench: cannot open postgres://#{cluster.port}: a PostgreSQL URL names a host and a database " \
                 "(postgres://USER@HOST:PORT/DATABASE)\n", err
    _, err, = rackbench("report", "--store", "mysql://db/x")
    assert_match(/\Arackbench: cannot open mysql:\/\/db\/x: unsupported store URL scheme 'mysql'/, err)
    _, err, = rackbench("report", "--store", "postgres://rackbench:secret@127.0.0.1:#{cluster.port}/no_such_db")
    assert_equal "rackbench: cannot open postgres://rackbench:***@127.0.0.1:#{cluster.port}/no_such_db: " \
                 "database \"no_such_db\" does not exist\n", err

    Rackbench::Store.open(url) { |store| store.db[:rackbench_schema].update(version: Rackbench::Store::Schema::VERSION + 1) }
    _, err, = rackbench("report", "--store", url)
    assert_match(/\Arackbench: .*#{Regexp.escape(url)} has results schema version #{Rackbench::Store::Schema::VERSION + 1}, newer than/, err)
    assert_equal 1, err.lines.size

    # A database of schema 1 (rackbench 0.1's) holding one trial: a worker
    # refuses it; store migrate upgrades it through every migration.
    old = cluster.create_database("old#{Process.pid}")
    Sequel.connect(old, keep_reference: false) do |db|
      db.create_table(:rackbench_schema) { Integer :version, null: false }
      db[:rackbench_schema].insert(version: 1)
      Rackbench::Store::Schema::MIGRATIONS.first.call(db)
      id = db[:experiments].insert(name: "old", fingerprint: "f", created_at: Time.now, rackbench_version: "0.1.0")
      db[:trials].insert(experiment_id: id, key: "k#batch=1", batch: 1, status: "ok", rps: 812.5, requests: 8125,
                         errors: 0, measure_s: 10.0, latency_us: JSON.generate("p50" => 900.0, "p99" => 2100.0))
    end
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(old, upgrade: false) }
    assert_match(/has results schema version 1, older than this rackbench .* upgrade it with rackbench store migrate/,
                 error.message)
    assert_match(/results schema version #{Rackbench::Store::Schema::VERSION}/, assert_rackbench("store", "migrate", old))
    Rackbench::Store.open(old, upgrade: false) do |store|
      trial = store.trials.first
      assert_equal [812.5, 8125, 2100.0, "http"], [trial.rate, trial.requests, trial.latency_us["p99"], trial.kind]
    end

    other = cluster.create_database("other#{Process.pid}")
    Sequel.connect(other, keep_reference: false) { |db| db.create_table(:accounts) { primary_key :id } }
    _, err, = rackbench("report", "--store", other)
    assert_match(/is not a rackbench results database \(it holds other tables: accounts\)/, err)

    cluster.pause
    begin
      _, err, status = rackbench("report", "--store", url)
      refute status.success?
      assert_match(/\Arackbench: cannot open #{Regexp.escape(url)}: connection to server at "127.0.0.1", port #{cluster.port} failed: Connection refused\n\z/, err)
      # The doctor says so before it boots anything.
      _, err, status = rackbench("check", "--store", url, "--results", File.join(dir, "check"))
      refute status.success?
      assert_match(/\Arackbench: cannot open #{Regexp.escape(url)}: connection to server/, err)
      refute File.exist?(File.join(dir, "check", "logs")), "nothing booted"
    ensure
      cluster.resume
    end
  end

  # The engine's result, its rate scaled by the call's number: each trial
  # its own figures, the same in two runs that make the same calls.
  class VaryingEngine < Fakes::Engine
    def run(settings, env: {}, on_phase: nil)
      result = super
      scale = 1.0 + (0.07 * (calls % 5))
      doc = result.to_h.merge("requests" => (400 * scale).round, "rps" => 200.0 * scale)
      doc["status"] = { "200" => doc["requests"] }
      Rackbench::LoadResult.new(doc)
    end
  end
end
