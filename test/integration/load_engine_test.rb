# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/fixture_server"

# The load engine against a fixture server that counts what it really saw:
# the engine's accounting must match the server's exactly.
describe "load engine against a counting server" do
  # The fixture's :ok response, byte for byte.
  ok_response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nhello world\n"
  let(:ok_response_bytes) { ok_response.bytesize }

  before { require_engine! }

  def run_load(url, **options)
    settings = Rackbench::LoadSettings.build(url: url, duration_s: 1.0, **options)
    Rackbench::LoadEngine.new.run(settings)
  end

  it "reports exactly the requests the server answered" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 4, threads: 2, duration_s: 1.0)
      assert_operator result.requests, :>, 100
      assert_equal 0, result.error_count
      # Nothing is abandoned: requests in flight at the end are drained.
      assert_equal server.requests, result.requests
      assert_equal({ "200" => result.requests }, result.status)
      assert_equal 4, result.connections["established"]
      assert_equal 4, server.accepts
      assert_equal result.requests * ok_response_bytes, result.bytes
    end
  end

  it "counts warmup apart from the measured window" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 2, warmup_s: 0.5, duration_s: 0.5)
      assert_operator result.warmup["requests"], :>, 10
      assert_operator result.requests, :>, 10
      assert_equal server.requests, result.requests + result.warmup["requests"]
      assert_in_delta 0.5, result.warmup["duration_s"], 0.01
      assert_in_delta 0.5, result.duration_s, 0.01
    end
  end

  it "measures a fixed 20 ms server delay as a p50 of 20-22 ms" do
    Rackbench::Test::FixtureServer.open(mode: :ok, delay_ms: 20) do |server|
      result = run_load(server.url, connections: 2, duration_s: 1.5)
      p50_ms = result.latency_us["p50"] / 1000.0
      assert_operator p50_ms, :>=, 20.0
      assert_operator p50_ms, :<=, 22.0
      assert_operator result.latency_us["min"] / 1000.0, :>=, 20.0
    end
  end

  it "opens one connection per request with --no-keepalive" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 2, keepalive: false, duration_s: 0.7)
      assert_operator result.requests, :>, 50
      assert_equal result.requests, server.accepts
      assert_equal result.requests, result.connections["connects"]
      # The client closed: the request did not ask the server to.
      refute(server.request_log.any? { |_, _, headers, _| headers.key?("connection") })
    end
  end

  it "sends Connection: close as a header and lets the server close" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 2, headers: ["Connection: close"], duration_s: 0.7)
      assert_operator result.requests, :>, 50
      assert_equal result.requests, server.accepts
      assert_equal result.requests, result.connections["server_closes"]
      assert_equal 0, result.connections["close_ignored"]
      assert_equal 0, result.error_count
    end
  end

  it "reports a server that ignores Connection: close" do
    Rackbench::Test::FixtureServer.open(mode: :ignore_close) do |server|
      result = run_load(server.url, connections: 2, headers: ["Connection: close"], duration_s: 0.5)
      assert_operator result.requests, :>, 20
      assert_equal result.requests, result.connections["close_ignored"]
      assert_equal 0, result.error_count
    end
  end

  it "holds an open-loop rate within 1% and measures from the scheduled time" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 8, threads: 2, rate: 400, duration_s: 3.0)
      assert_in_delta 400.0, result.rps, 4.0
      assert_equal server.requests, result.requests
      late = result.late
      refute_nil late
      assert_equal result.requests, late["scheduled"]
      assert_equal "open", result.settings["mode"]
    end
  end

  it "counts requests queued behind a stalled server as late, not as missing" do
    Rackbench::Test::FixtureServer.open(mode: :ok, delay_ms: 50) do |server|
      # 2 connections at 50 ms can carry 40 req/s; asking 100 req/s means
      # most requests wait for a free connection: open loop must show it.
      result = run_load(server.url, connections: 2, rate: 100, duration_s: 1.0)
      assert_operator result.late["requests"], :>, 10
      assert_operator result.latency_us["p99"], :>, 200_000
      assert_equal server.requests, result.requests
    end
  end

  it "decodes chunked, split, HTTP/1.0 and close-delimited responses" do
    %i[chunked split http10 no_length].each do |mode|
      Rackbench::Test::FixtureServer.open(mode: mode) do |server|
        result = run_load(server.url, connections: 2, duration_s: 0.5)
        assert_operator result.requests, :>, 5, "#{mode}: requests"
        assert_equal 0, result.error_count, "#{mode}: errors #{result.errors}"
        # The server counts a response once its last write returns: the
        # engine can read that response, end and return before the server's
        # thread runs again (the open-loop tests wait the same way). Wait
        # for the count to settle, then compare. This does not explain the
        # one failure seen (649 written, 648 counted, no error, under two
        # test lanes, not seen again in 120 runs): the message says where
        # the response went if it comes back.
        settled = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
        sleep 0.01 until server.responses >= result.requests || Process.clock_gettime(Process::CLOCK_MONOTONIC) > settled
        assert_equal server.responses, result.requests,
                     "#{mode}: responses (server requests #{server.requests}, accepts #{server.accepts}; engine " \
                     "connections #{result.data["connections"]}, warmup #{result.data["warmup"]}, " \
                     "abandoned #{result.data["abandoned"]}, late #{result.data["late"].inspect})"
      end
    end
  end

  it "writes one raw record per request" do
    Dir.mktmpdir do |dir|
      raw = File.join(dir, "raw.csv")
      Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
        result = run_load(server.url, connections: 2, warmup_s: 0.2, duration_s: 0.5, raw_file: raw)
        lines = File.readlines(raw, chomp: true)
        assert_equal "phase,start_ns,latency_ns,status,bytes,connection,error", lines.first
        records = lines.drop(1).map { |l| l.split(",", -1) }
        assert_equal result.requests + result.warmup["requests"], records.size
        assert_equal result.requests, records.count { |r| r[0] == "m" }
        assert(records.all? { |r| r[3] == "200" && r[6] == "" && r[2].to_i.positive? })
        assert_equal [0, 1], records.map { |r| r[5].to_i }.uniq.sort
      end
    end
  end

  it "replays a request list with sessions: login first, weighted pages, cookies kept" do
    Dir.mktmpdir do |dir|
      list = File.join(dir, "requests.txt")
      File.write(list, <<~LIST)
        # one login per connection, then pages 3:1
        --- first name=login
        POST /login
        Content-Type: application/x-www-form-urlencoded

        user=alice
        --- weight=3
        GET /a
        --- weight=1
        GET /b
      LIST
      Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
        result = run_load(server.url, connections: 3, duration_s: 1.0, requests_file: list, cookies: true)
        by_path = server.requests_by_path
        assert_equal 3, by_path["/login"]
        assert_equal server.requests, result.requests
        ratio = by_path["/a"].fdiv(by_path["/b"])
        assert_in_delta 3.0, ratio, 0.5
        logins = server.request_log.select { |_, path, _, _| path == "/login" }
        assert(logins.all? { |_, _, headers, body| body == "user=alice" && !headers.key?("cookie") })
        pages = server.request_log.reject { |_, path, _, _| path == "/login" }
        assert(pages.all? { |_, _, headers, _| headers["cookie"].to_s.match?(/\Asession=s\d+\z/) })
        assert_equal 3, pages.map { |_, _, headers, _| headers["cookie"] }.uniq.size
      end
    end
  end

  it "pins its threads with --cpus" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 2, duration_s: 0.3, cpus: "0")
      assert result.cpu["pinned"]
      assert_equal [0], result.settings["cpus"]
    end
  end

  it "reports its own CPU time" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 2, duration_s: 0.5)
      cpu = result.cpu
      assert_operator cpu["user_s"] + cpu["system_s"], :>, 0
      assert_operator cpu["utilization"], :>, 0
      assert_in_delta (cpu["user_s"] + cpu["system_s"]) * 1e6 / result.requests, cpu["us_per_request"], 0.01
      assert_operator result.data["memory"]["max_rss_bytes"], :>, 0
    end
  end
end
