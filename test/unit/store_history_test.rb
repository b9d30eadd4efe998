# frozen_string_literal: true

require "test_helper"
require "json"
require "sequel"

# Retried failures in the store (schema 4, Store::History): a database at
# schema 3 upgrades keeping every row as the first attempt at its key; a
# retry replaces the stored failure, which moves to trial_history whole;
# reports read the latest attempt and list the earlier ones.
describe "the trial history of retried failures" do
  let(:dir) { Dir.mktmpdir("rackbench-history") }
  let(:path) { File.join(dir, "results.db") }
  after { FileUtils.rm_rf(dir) }

  HISTORY_ENGINE_DOC = JSON.parse(File.read(File.expand_path("../fixtures/engine_result.json", __dir__))).freeze

  def record(key, status:, **fields)
    Rackbench::Trial::Record.new(key: key, kind: "http", status: status, batch: 1, position: 0, ruby: "ruby",
                                 server: "puma", app: "hello", processes: 1, threads: 1,
                                 dims: { "ruby" => "ruby", "server" => "puma", "app" => "hello", "processes" => 1,
                                         "threads" => 1 },
                                 reason: status == "failed" ? "server not ready after 60s" : nil,
                                 result: status == "ok" ? HISTORY_ENGINE_DOC : nil, **fields)
  end

  def with_experiment
    Rackbench::Store.open(dir) do |store|
      id = store.find_or_create_experiment(name: "e", fingerprint: "f", seed: 1, batches: 1, source_text: "",
                                           environment: {})
      yield store, id
    end
  end

  describe "a database at schema 3" do
    # Written as rackbench 0.2.0.dev wrote it, before migration 4.
    def schema3
      db = Sequel.sqlite(path)
      db.create_table(Rackbench::Store::Schema::VERSION_TABLE) { Integer :version, null: false }
      Rackbench::Store::Schema::MIGRATIONS.first(3).each { |migration| migration.call(db) }
      db[Rackbench::Store::Schema::VERSION_TABLE].insert(version: 3)
      experiment = db[:experiments].insert(name: "old", fingerprint: "f", created_at: Time.now,
                                           rackbench_version: "0.2.0.dev")
      { "ok1" => "ok", "failed1" => "failed", "failed2" => "failed" }.each do |key, status|
        db[:trials].insert(experiment_id: experiment, key: key, kind: "http", status: status, ruby: "ruby",
                           reason: status == "failed" ? "boom" : nil, log_path: "/logs/#{key}.log",
                           result: status == "ok" ? JSON.generate(HISTORY_ENGINE_DOC) : nil)
      end
      db.disconnect
      experiment
    end

    it "keeps every row, each the first attempt at its key, failures retryable and no history yet" do
      experiment = schema3
      Rackbench::Store.open(dir) do |store|
        assert_equal Rackbench::Store::Schema::VERSION, store.db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
        trials = store.trials(experiment)
        assert_equal [["ok1", "ok", 1], ["failed1", "failed", 1], ["failed2", "failed", 1]],
                     trials.map { |t| [t.key, t.status, t.attempt] }
        assert_equal HISTORY_ENGINE_DOC, trials.first.result
        failed = store.failed_attempts(experiment)
        assert_equal %w[failed1 failed2], failed.keys.sort
        assert_equal [1, "/logs/failed1.log"], failed["failed1"].to_a.first(2)
        assert_empty store.earlier_attempts(experiment)

        store.save_trial(experiment, record("failed1", status: "ok", attempt: 2))
        assert_equal [["ok1", 1], ["failed2", 1], ["failed1", 2]], store.trials(experiment).map { |t| [t.key, t.attempt] }
        earlier = store.earlier_attempts(experiment)
        assert_equal [["failed1", 1, "failed", "boom", "/logs/failed1.log"]],
                     earlier.map { |r| [r.key, r.attempt, r.status, r.reason, r.log_path] }
      end
    end
  end

  it "stays at schema 3, every row as it was, when migration 4 fails half-way" do
    experiment = nil
    Sequel.sqlite(path) do |db|
      db.create_table(Rackbench::Store::Schema::VERSION_TABLE) { Integer :version, null: false }
      Rackbench::Store::Schema::MIGRATIONS.first(3).each { |migration| migration.call(db) }
      db[Rackbench::Store::Schema::VERSION_TABLE].insert(version: 3)
      experiment = db[:experiments].insert(name: "old", fingerprint: "f", created_at: Time.now,
                                           rackbench_version: "0.2.0.dev")
      db[:trials].insert(experiment_id: experiment, key: "kept", kind: "http", status: "failed", reason: "boom")
      # The table migration 4 is about to create: it fails after adding trials.attempt.
      db.create_table(:trial_history) { primary_key :id }
    end
    error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(dir) }
    assert_match(/trial_history/, error.message)
    Sequel.sqlite(path) do |db|
      assert_equal 3, db[Rackbench::Store::Schema::VERSION_TABLE].get(:version)
      refute_includes db.schema(:trials).map(&:first), :attempt
      assert_equal [["kept", "failed", "boom"]], db[:trials].select_map(%i[key status reason])
    end
  end

  describe "Store#save_trial of a retry" do
    it "moves the failure it replaces to the history whole, and reads it back equal" do
      with_experiment do |store, id|
        first = record("k", status: "failed", boot_s: 1.5, log_path: "/logs/k.log")
        store.save_trial(id, first)
        store.save_trial(id, record("k", status: "failed", attempt: 2), earlier_log_path: "/logs/k.attempt-1.log")
        store.save_trial(id, record("k", status: "ok", attempt: 3))
        assert_equal [["k", 3, "ok"]], store.trials(id).map { |t| [t.key, t.attempt, t.status] }
        assert_equal({}, store.failed_attempts(id), "an ok latest attempt is not a failure any more")
        earlier = store.earlier_attempts(id)
        assert_equal [1, 2], earlier.map(&:attempt)
        assert_equal first.with(log_path: "/logs/k.attempt-1.log"), earlier.first,
                     "every field kept, the log where it was kept"
        assert_nil earlier.last.log_path
        assert_equal 2, store.db[:trial_history].count
      end
    end

    it "refuses a retry that does not follow a stored failed attempt, changing nothing" do
      with_experiment do |store, id|
        store.save_trial(id, record("ok", status: "ok"))
        store.save_trial(id, record("failed", status: "failed"))
        [["ok", 2, /holds attempt 1 \(ok\)/], ["failed", 3, /expected failed attempt 2/],
         ["missing", 2, /holds nothing/]].each do |key, attempt, message|
          error = assert_raises(Rackbench::Store::Error) { store.save_trial(id, record(key, status: "ok", attempt: attempt)) }
          assert_match message, error.message
        end
        assert_equal [["ok", "ok", 1], ["failed", "failed", 1]], store.trials(id).map { |t| [t.key, t.status, t.attempt] }
        assert_empty store.earlier_attempts(id)
      end
    end

    it "still refuses a second first attempt at a key" do
      with_experiment do |store, id|
        store.save_trial(id, record("k", status: "failed"))
        assert_raises(Rackbench::Store::DuplicateTrial) { store.save_trial(id, record("k", status: "ok")) }
      end
    end
  end

  describe "the report" do
    def report_of
      Rackbench::Store.open(dir) { |store| yield Rackbench::Report.new(store) }
    end

    it "uses the latest attempt only and lists the earlier ones per trial" do
      with_experiment do |store, id|
        store.save_trial(id, record("a", status: "ok", batch: 1))
        store.save_trial(id, record("b", status: "failed", batch: 2, log_path: "/logs/b.log"))
        store.save_trial(id, record("b", status: "ok", batch: 2, attempt: 2), earlier_log_path: "/logs/b.attempt-1.log")
      end
      report_of do |report|
        config = report.configs.first
        assert_equal [2, 0], [config.batches, config.failed]
        doc = report.to_h["trials"].to_h { |t| [t["key"], t] }
        assert_equal [1, []], doc["a"].values_at("attempt", "earlier_attempts")
        assert_equal 2, doc["b"]["attempt"]
        earlier = doc["b"]["earlier_attempts"]
        assert_equal [[1, "failed", "server not ready after 60s", "/logs/b.attempt-1.log"]],
                     earlier.map { |e| e.values_at("attempt", "status", "reason", "log_path") }
        text = Rackbench::Report::Terminal.new(report).render
        assert_includes text, "1 trial retried, 1 earlier failure kept (see rackbench report --history)"
        assert_match(%r{^  b attempt 1 at .*: failed: server not ready after 60s \(log: /logs/b.attempt-1.log\)$},
                     report.history.to_text)
      end
    end

    it "says nothing of retries when there were none" do
      with_experiment { |store, id| store.save_trial(id, record("a", status: "ok")) }
      report_of do |report|
        refute_includes Rackbench::Report::Terminal.new(report).render, "retried"
        assert_equal "No trial was retried: there are no earlier attempts.\n", report.history.to_text
      end
    end
  end
end
