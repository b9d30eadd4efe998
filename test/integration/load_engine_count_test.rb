# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/fixture_server"

# The engine's fixed-count window (--count, doc/output.md) against a
# fixture server that counts what it really saw: exactly N requests in the
# window whatever the threads and connections, nothing in flight at either
# edge, and nothing sent while the caller holds an edge (--hold-fd); and a
# connection's think time (--think) between a response and its next
# request. About 3 s.
describe "load engine: a window of a fixed count of requests" do
  before { require_engine! }

  def run_load(url, on_phase: nil, **options)
    settings = Rackbench::LoadSettings.build(url: url, **options)
    Rackbench::LoadEngine.new.run(settings, on_phase: on_phase)
  end

  it "sends exactly N requests in the window, shared by every thread and connection" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 5, threads: 2, count: 997, warmup_s: 0.3)
      assert_equal 997, result.requests
      assert_equal 0, result.error_count
      assert_equal 997, result.to_h["timeline"].sum { |second| second["requests"] }
      assert_equal 997, result.settings["count"]
      assert_nil result.settings["duration_s"]
      assert_operator result.warmup["requests"], :>, 0
      # The server saw the warmup and the window, nothing more, nothing less.
      assert_equal server.requests, result.requests + result.warmup["requests"]
      assert_operator result.duration_s, :>, 0
    end
  end

  it "warms up with exactly W requests when the warmup is a count" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 3, threads: 2, count: 50, warmup_count: 211)
      assert_equal [50, 211, 261], [result.requests, result.warmup["requests"], server.requests]
      assert_equal 211, result.settings["warmup_count"]
    end
  end

  it "counts the window from its first request: no warmup, N requests, the same N" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 3, count: 7)
      assert_equal [7, 0, 7], [result.requests, result.warmup["requests"], server.requests]
    end
  end

  it "holds each edge until the caller returns: quiet at the start, connections kept after the end" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      seen = {}
      on_phase = lambda do |phase|
        before = server.requests
        sleep 0.3 # nothing may be sent while held
        seen[phase] = [before, server.requests, server.accepts]
      end
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      result = run_load(server.url, connections: 4, threads: 2, count: 300, warmup_s: 0.2, on_phase: on_phase)
      elapsed_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
      warmup = result.warmup["requests"]
      # At the start edge every request of the warmup had been answered, and none of the window sent.
      assert_equal [warmup, warmup], seen[:measure].first(2)
      # At the end edge the N had been answered, over the same connections, still open.
      assert_equal [warmup + 300, warmup + 300], seen[:end].first(2)
      assert_equal 4, seen[:end].last
      assert_equal 300, result.requests
      # The window's duration leaves the two holds (0.3 s each, at least) out.
      assert_operator result.duration_s + 0.6, :<=, elapsed_s
    end
  end

  it "pauses each connection for its think time between a response and its next request" do
    Rackbench::Test::FixtureServer.open(mode: :ok) do |server|
      result = run_load(server.url, connections: 2, count: 40, think_s: 0.02)
      assert_equal [40, 40], [result.requests, server.requests]
      assert_equal 0.02, result.settings["think_s"]
      # Each connection sends 20 requests with a 20 ms pause after each but its last: 19 pauses at least.
      assert_operator result.duration_s, :>=, 19 * 0.02
      # The pause is not the server's: latency counts from the request, sent after it. Each
      # connection's window holds its 20 latencies and 19 pauses one after the other.
      assert_operator 40 * result.latency_us["mean"] + 38 * 20_000, :<=, 2 * result.duration_s * 1e6 + 1_000
    end
  end
end
