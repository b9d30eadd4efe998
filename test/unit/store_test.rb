# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "io/wait"
require "json"
require "rbconfig"
require "rackbench/store"

describe Rackbench::Store do
  before do
    @tmp = Dir.mktmpdir("rackbench-store")
    @dir = File.join(@tmp, "results")
  end

  after do
    @store&.close
    FileUtils.rm_rf(@tmp)
  end

  def store
    @store ||= Rackbench::Store.open(@dir)
  end

  def reopen
    @store&.close
    @store = nil
    store
  end

  def experiment_id(name: "quick", fingerprint: "fp1", store: self.store)
    store.find_or_create_experiment(name: name, fingerprint: fingerprint, seed: 42, batches: 3,
                                    source_text: "name: #{name}\n", environment: { "cpu_count" => 2 })
  end

  def trial(key, **fields)
    Rackbench::Trial::Record.new(**{ key: key, kind: "http", status: "ok", batch: 1, position: 0, ruby: "ruby-3.1",
                                     server: "puma", app: "hello", processes: 1, threads: 5 }.merge(fields))
  end

  describe ".open" do
    it "creates the results directory and results.db in WAL mode with synchronous=FULL" do
      store
      assert File.file?(File.join(@dir, "results.db"))
      assert_equal File.join(File.expand_path(@dir), "results.db"), store.location
      assert_equal "wal", store.db.fetch("PRAGMA journal_mode").single_value
      assert_equal 2, store.db.fetch("PRAGMA synchronous").single_value, "2 is FULL"
      assert_equal 1, store.db.fetch("PRAGMA foreign_keys").single_value
      assert_equal Rackbench::Store::Schema::VERSION, store.db[:rackbench_schema].get(:version)
      assert_equal [], store.experiments
      assert_nil store.latest_experiment
    end

    it "keeps everything across close and reopen, without migrating twice" do
      id = experiment_id
      store.save_trial(id, trial("a", result: { "rps" => 10.5 }))
      reopen
      assert_equal [id], store.experiments.map { |e| e[:id] }
      assert_equal [["a", 10.5]], store.trials(id).map { |t| [t.key, t.rate] }
      assert_equal 1, store.db[:rackbench_schema].count
    end

    it "yields the store and closes it when given a block" do
      seen = nil
      value = Rackbench::Store.open(@dir) do |s|
        seen = s
        experiment_id(store: s)
      end
      assert_equal 1, value
      assert_raises(Rackbench::Store::Error) { seen.experiments }
    end

    it "hides the password of a database URL in messages" do
      assert_equal "postgres://bench:***@db.example:5432/results",
                   Rackbench::Store::Connection.redact("postgres://bench:p@ss:w0rd@db.example:5432/results")
      assert_equal "postgres://bench@db/results", Rackbench::Store::Connection.redact("postgres://bench@db/results")
    end

    it "accepts a sqlite:// URL" do
      path = File.join(@tmp, "other.db")
      Rackbench::Store.open("sqlite://#{path}") { |s| s.save_trial(experiment_id(store: s), trial("a")) }
      Rackbench::Store.open("sqlite://#{path}") { |s| assert_equal ["a"], s.finished_keys(1).to_a }
    end

    it "refuses a results.db that is not SQLite, naming the file" do
      FileUtils.mkdir_p(@dir)
      File.write(File.join(@dir, "results.db"), "these are not the bytes you are looking for\n" * 200)
      error = assert_raises(Rackbench::Store::Error) { store }
      assert_match %r{\Acannot open .*/results\.db: file is not a database\z}, error.message
      assert_kind_of Rackbench::Error, error
    end

    it "refuses a SQLite file holding someone else's tables" do
      FileUtils.mkdir_p(@dir)
      other = Sequel.sqlite(File.join(@dir, "results.db"), keep_reference: false)
      other.create_table(:invoices) { primary_key :id }
      other.disconnect
      error = assert_raises(Rackbench::Store::Error) { store }
      assert_match(/results\.db is not a rackbench results database \(it holds other tables: invoices\)/, error.message)
    end

    it "refuses results written by a newer schema" do
      store.db[:rackbench_schema].update(version: 99)
      error = assert_raises(Rackbench::Store::Error) { reopen }
      assert_match(/results\.db has results schema version 99, newer than/, error.message)
    end

    it "says so when the results directory cannot be created or written" do
      File.write(File.join(@tmp, "file"), "")
      error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(File.join(@tmp, "file", "results")) }
      assert_match(%r{\Acannot create results directory .*/file/results: .*/file is not a directory\z}, error.message)

      FileUtils.mkdir_p(File.join(@dir, "results.db"))
      error = assert_raises(Rackbench::Store::Error) { store }
      assert_match(%r{results\.db is not a writable file\z}, error.message)

      skip "root can write anywhere" if Process.uid.zero?
      locked = File.join(@tmp, "locked")
      FileUtils.mkdir_p(locked, mode: 0o500)
      error = assert_raises(Rackbench::Store::Error) { Rackbench::Store.open(locked) }
      assert_equal "results directory #{locked} is not writable", error.message
    end
  end

  describe "experiments" do
    it "finds the experiment with the same name and fingerprint instead of creating another" do
      id = experiment_id
      assert_equal id, experiment_id
      other = experiment_id(fingerprint: "fp2")
      refute_equal id, other
      third = experiment_id(name: "other")
      assert_equal [id, other, third], store.experiments.map { |e| e[:id] }
      assert_equal other, store.latest_experiment(name: "quick")[:id]
      assert_equal third, store.latest_experiment[:id]
      assert_nil store.latest_experiment(name: "missing")
    end

    it "stores what it was created with" do
      before_s = Time.now.to_f - 1 # however the database rounds its times
      id = experiment_id
      after_s = Time.now.to_f + 1
      e = store.experiment(id)
      assert_equal ["quick", "fp1", 42, 3, "name: quick\n", Rackbench::VERSION, { "cpu_count" => 2 }],
                   e.values_at(:name, :fingerprint, :seed, :batches, :source_text, :rackbench_version, :environment)
      assert_includes before_s..after_s, e[:created_at].to_f, "created during the call"
      assert_nil e[:finished_at]
      assert_nil store.experiment(999)
    end
  end

  describe "#save_trial" do
    it "stores trials and reports their keys, failed ones included" do
      id = experiment_id
      store.save_trial(id, trial("a"))
      store.save_trial(id, trial("b", status: "failed", reason: "server never ready"))
      assert_equal Set["a", "b"], store.finished_keys(id)
      assert_equal Set[], store.finished_keys(experiment_id(fingerprint: "fp2"))
      assert_equal ["server never ready"], store.trials(id).filter_map(&:reason)
    end

    it "raises on a second save of one key and leaves the first untouched" do
      id = experiment_id
      store.save_trial(id, trial("a", result: { "rps" => 1.0 }))
      error = assert_raises(Rackbench::Store::DuplicateTrial) { store.save_trial(id, trial("a", result: { "rps" => 2.0 })) }
      assert_match(/\Atrial a is already stored for experiment #{id} in .*results\.db\z/, error.message)
      assert_equal [1.0], store.trials(id).map(&:rate)
      other = experiment_id(fingerprint: "fp2")
      store.save_trial(other, trial("a")) # keys are unique per experiment only
      assert_equal 2, store.trials.size
    end

    it "stores a record as it is and reads it back equal, every field a column of its own" do
      id = experiment_id
      # Nanoseconds, as Time.now gives: the record keeps microseconds, as
      # the store does, so the record read back is equal.
      started = Time.at(1_700_000_000, 123_456_789, :nsec)
      record = trial(
        "b2/ruby-3.1/puma/hello/p2t5", batch: 2, position: 7, ruby_description: "ruby 3.1.2p20", processes: 2,
        dims: { "ruby" => "ruby-3.1", "load.connections" => 50, "env.MALLOC_ARENA_MAX" => "2" },
        load_settings: { "connections" => 50, "duration_s" => 10.0 }, env: { "MALLOC_ARENA_MAX" => "2" },
        started_at: started, finished_at: started + 12.5, boot_s: 0.8, wall_s: 13.2, stop_s: 0.1,
        result: { "rps" => 1234.5, "requests" => 12_357, "errors" => { "timeout" => 3 },
                  "latency_us" => { "p50" => 390, "p99" => 800 }, "histogram" => { "buckets" => [[1, 2, 3]] } },
        sample: { "rss_peak_bytes" => 5 * 2**30, "pss_peak_bytes" => 3 * 2**30, "cpu_user_s" => 7.5 },
        machine: { "busy" => false, "other_cpu_percent" => 1.5 },
        identity: { "description" => "ruby 3.1.2p20", "jit" => nil, "mismatches" => [] },
        gem_versions: { "puma" => "6.4.2", "rack" => "3.0.9" }, layout: { "server_cpus" => [1], "engine_cpus" => [0] },
        log_path: "logs/b2-ruby-3.1-puma-hello-p2t5.log",
        inside: { "agent" => "counting", "window" => { "requests" => 12_357, "duration_s" => 10.0 },
                  "processes" => [{ "pid" => 9, "role" => "worker", "gc" => { "count" => 4, "time_ms" => nil } }],
                  "missing" => [{ "pid" => 10, "reason" => "no identity report" }] }
      )
      store.save_trial(id, record)
      read = reopen.trials(id).first
      Rackbench::Trial::Record::FIELDS.each do |name|
        expected = record.public_send(name)
        expected.nil? ? assert_nil(read.public_send(name), name) : assert_equal(expected, read.public_send(name), name)
      end
      assert_equal 123_456, read.started_at.usec
      assert_equal record, read
      assert_equal [1234.5, 12_357, 3, 12_360, 5 * 2**30], [read.rate, read.requests, read.failed_requests, read.attempts,
                                                            read.rss_peak_bytes]
      columns = store.db[:trials].columns
      assert_equal (%i[id experiment_id] + Rackbench::Trial::Record::FIELDS).sort, columns.sort
    end

    it "stores a 300 KB engine result intact" do
      id = experiment_id
      buckets = Array.new(12_000) { |i| [i * 7, (i * 7919) % 100_003] }
      timeline = Array.new(3600) { |s| { "second" => s, "requests" => 1000 + s, "p99_us" => 800.25 } }
      engine = { "histogram" => { "buckets" => buckets }, "timeline" => timeline }
      assert_operator JSON.generate(engine).bytesize, :>, 300_000
      store.save_trial(id, trial("big", result: engine))
      assert_equal engine, reopen.trials(id).first.result
      assert_nil store.trials(id, result: false).first.result
    end

    it "rejects what it cannot store faithfully, storing nothing" do
      id = experiment_id
      assert_raises(ArgumentError) { trial("a", rsp: 1) }
      assert_raises(ArgumentError) { trial("a", status: "skipped") }
      assert_raises(ArgumentError) { trial("") }
      error = assert_raises(ArgumentError) { trial("a", result: { "p50" => Float::NAN }) }
      assert_match(/\Atrial a: result cannot be stored as JSON .*NaN/, error.message)
      assert_equal Set[], store.finished_keys(id)
    end

    it "names the experiment when it does not exist" do
      store
      error = assert_raises(Rackbench::Store::Error) { store.save_trial(7, trial("a")) }
      assert_match(/has no experiment 7\z/, error.message)
    end

    it "reports a full disk in one line and keeps the trials already stored" do
      id = experiment_id
      store.save_trial(id, trial("a"))
      store.db.run("PRAGMA wal_checkpoint(TRUNCATE)")
      pages = store.db.fetch("PRAGMA page_count").single_value
      store.db.fetch("PRAGMA max_page_count = #{pages + 2}").all
      error = assert_raises(Rackbench::Store::Error) do
        store.save_trial(id, trial("b", result: { "blob" => "x" * 200_000 }))
      end
      assert_match(%r{\Acannot save trial b to .*/results\.db: database or disk is full\z}, error.message)
      assert_equal Set["a"], reopen.finished_keys(id)
    end

    it "refuses to be used once closed" do
      id = experiment_id
      store.close
      error = assert_raises(Rackbench::Store::Error) { store.save_trial(id, trial("a")) }
      assert_match(/results\.db is closed\z/, error.message)
    end
  end

  describe "runs" do
    it "records a run from start to finish and marks the experiment finished" do
      id = experiment_id
      run = store.start_run(id, resumed: false, environment: { "loadavg" => [0.1, 0.1, 0.1] })
      assert_equal [["running", false, Process.pid]], store.runs(id).map { |r| r.values_at(:status, :resumed, :pid) }
      store.finish_run(run, "finished")
      row = store.runs(id).first
      assert_equal ["finished", { "loadavg" => [0.1, 0.1, 0.1] }], row.values_at(:status, :environment)
      assert_equal row[:finished_at], store.experiment(id)[:finished_at]

      error = assert_raises(Rackbench::Store::Error) { store.finish_run(run, "failed") }
      assert_equal "run #{run} already ended (finished)", error.message
      assert_raises(ArgumentError) { store.finish_run(run, "done") }
      assert_raises(Rackbench::Store::Error) { store.finish_run(999, "failed") }
    end

    it "leaves the experiment unfinished when a run is interrupted" do
      id = experiment_id
      store.finish_run(store.start_run(id, resumed: false), "interrupted")
      resumed = store.start_run(id, resumed: true)
      assert_nil store.experiment(id)[:finished_at]
      assert_equal [["interrupted", false], ["running", true]], store.runs(id).map { |r| r.values_at(:status, :resumed) }
      store.finish_run(resumed, "finished")
      refute_nil store.experiment(id)[:finished_at]
    end

    it "marks a run whose process died (kill -9) interrupted when the next one starts" do
      id = experiment_id
      # No process has the highest pid the kernel allows: pids stay below it.
      dead = Integer(File.read("/proc/sys/kernel/pid_max"))
      store.db[:runs].insert(experiment_id: id, started_at: Time.now, status: "running", resumed: false,
                             hostname: Etc.uname[:nodename], pid: dead)
      alive = store.start_run(id, resumed: false) # this process: still alive, stays running
      store.start_run(id, resumed: true)
      assert_equal [[dead, "interrupted"], [Process.pid, "running"], [Process.pid, "running"]],
                   store.runs(id).map { |r| r.values_at(:pid, :status) }
      assert_equal alive, store.runs(id)[1][:id]
    end
  end
end
