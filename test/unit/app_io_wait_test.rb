# frozen_string_literal: true

require "test_helper"
require_relative "../../apps/io-wait/io_wait_app"
require_relative "../../apps/io-wait/items_db"

# io-wait without SQLite: the sleeps are recorded instead of slept, and /db
# is served by a fake query object (the real one, on Extralite, runs in
# test/integration/apps_test.rb).
describe "apps/io-wait" do
  let(:slept) { [] }
  let(:fake_db) { Struct.new(:calls) { def query(i) = (calls << i) && [i, i * 10] }.new([]) }
  let(:app) { IoWaitApp.new(db: fake_db, sleeper: ->(seconds) { slept << seconds }) }

  def get(path, query = "")
    status, headers, body = app.call("PATH_INFO" => path, "QUERY_STRING" => query)
    [status, headers["content-type"], body.join]
  end

  it "waits 10 ms by default, really (not 0)" do
    assert_equal [200, "text/plain", "waited 10 ms\n"], get("/")
    assert_equal [0.01], slept
  end

  it "waits ?ms= milliseconds, from 0 to 10,000" do
    assert_equal 200, get("/", "ms=0").first
    assert_equal 200, get("/", "ms=250").first
    assert_equal 200, get("/", "ms=10000").first
    assert_equal [0.0, 0.25, 10.0], slept
  end

  it "refuses an invalid ms without waiting" do
    ["ms=-1", "ms=10001", "ms=ten", "ms=1.5", "ms="].each do |query|
      status, _, body = get("/", query)
      assert_equal 400, status, query
      assert_match(/ms must be an integer from 0 to 10000/, body)
    end
    assert_empty slept
  end

  it "runs ?queries= database queries on /db (default 1, at most 100)" do
    assert_equal [200, "text/plain", "1 queries\nquery 0: 0 0\n"], get("/db")
    status, _, body = get("/db", "queries=3")
    assert_equal 200, status
    assert_equal "3 queries\nquery 0: 0 0\nquery 1: 1 10\nquery 2: 2 20\n", body
    assert_equal 400, get("/db", "queries=0").first
    assert_equal 400, get("/db", "queries=101").first
    assert_equal [0, 0, 1, 2], fake_db.calls
  end

  it "answers 404 for /db without a database, and for unknown paths" do
    assert_equal 404, IoWaitApp.new.call("PATH_INFO" => "/db", "QUERY_STRING" => "").first
    assert_equal 404, get("/nope").first
    assert_equal 200, get("/up").first
  end

  it "seeds a deterministic table whose query results are known" do
    assert_equal [1000, 450_000], ItemsDb.expected(0)
    assert_equal ItemsDb::ROWS, (0...ItemsDb::CATEGORIES).sum { |c| ItemsDb.expected(c).first }
    assert_equal "/trial/io-wait.sqlite3", ItemsDb.path("RACKBENCH_TRIAL_DIR" => "/trial")
    assert_match %r{/rackbench-io-wait-\d+/io-wait\.sqlite3\z}, ItemsDb.path({})
  end
end
