# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require_relative "../fixtures/stalling_server"

# Open-loop accounting: every request scheduled in the measured window is
# a response, an error, or counted as unsent, exactly, including when the
# server stops answering and holds every connection past the window's end.
# The stalls are long next to the window, so the checks hold however slow
# the machine is; nothing here depends on speed.
describe "load engine open-loop accounting" do
  before { require_engine! }

  def run_load(url, **options)
    Rackbench::LoadEngine.new.run(Rackbench::LoadSettings.build(url: url, **options))
  end

  # The identity of doc/output.md, and offered_rps read back from it.
  def assert_every_request_accounted(result)
    late = result.late
    refute result.interrupted?
    assert_equal late["scheduled"], result.requests + result.error_count + late["unsent"],
                 "scheduled #{late["scheduled"]} = requests #{result.requests} + errors #{result.errors} + " \
                 "unsent #{late["unsent"]}"
    assert_in_delta late["scheduled"], result.offered_rps * result.duration_s, 0.01
  end

  it "counts the requests a stalled server kept from going out as unsent" do
    # 20 answers, then every request is held 4 s: the four connections are
    # all stuck long before the 2 s window ends, and are answered after it.
    Rackbench::Test::StallingServer.open(answer_first: 20, stall_s: 4.0) do |server|
      result = run_load(server.url, connections: 4, threads: 2, rate: 200, duration_s: 2.0, timeout_s: 10.0)
      assert_every_request_accounted(result)
      assert_operator result.unsent, :>, 0
      assert_equal 0, result.error_count
      # The server counts a response just after writing it: wait for it.
      wait_until(message: "server count") { server.responses == result.requests }
      assert_operator result.rps, :<, result.offered_rps
      # The held requests were answered, after the window, with their wait.
      assert_operator result.latency_us["max"], :>=, 4_000_000
    end
  end

  it "holds the identity when the held requests time out instead" do
    # Held 60 s against a 0.5 s timeout: connections free up by timing out
    # (inside the window too), new requests go out late and are held again.
    Rackbench::Test::StallingServer.open(answer_first: 20, stall_s: 60.0) do |server|
      result = run_load(server.url, connections: 4, threads: 2, rate: 200, duration_s: 2.0, timeout_s: 0.5)
      assert_every_request_accounted(result)
      assert_operator result.unsent, :>, 0
      assert_operator result.errors["timeout"], :>=, 4
      assert_equal result.errors["timeout"], result.error_count
      assert_equal 20, result.requests
      assert_equal 20, server.responses
    end
  end

  it "counts what was scheduled up to an interrupt, the held requests as abandoned" do
    Rackbench::Test::StallingServer.open(answer_first: 20, stall_s: 60.0) do |server|
      settings = Rackbench::LoadSettings.build(url: server.url, connections: 4, rate: 200, duration_s: 30.0,
                                               timeout_s: 60.0)
      Open3.popen3(*Rackbench::LoadEngine.new.argv(settings)) do |stdin, stdout, _stderr, thread|
        stdin.close
        # Requests 21-24 hold all four connections until the interrupt.
        wait_until(timeout_s: 30, message: "all connections held") { server.requests >= 24 }
        # The engine's schedule started at or before the first request
        # arrived, so slot 25 (0.12 s in at 200 req/s) is due by 0.2 s
        # after it: from then on at least one request is due and unsent.
        wait_until(timeout_s: 30, message: "slot 25 due") { now_s >= server.first_request_at + 0.2 }
        Process.kill(:TERM, thread.pid)
        assert thread.value.success?
        result = Rackbench::LoadResult.new(JSON.parse(stdout.read))
        assert result.interrupted?
        late = result.late
        assert_operator result.unsent, :>, 0
        assert_equal 20, result.requests
        assert_equal 0, result.error_count
        # No warmup: the abandoned requests are all the window's, so the
        # documented bound (0 .. abandoned) is met exactly at abandoned.
        assert_equal 4, result.data["abandoned"]
        assert_equal late["scheduled"], result.requests + result.error_count + result.unsent + 4
      end
    end
  end

  def now_s = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  it "sends every scheduled request to a healthy server: nothing unsent" do
    # 20 connections at 100 req/s: a connection is always free, even if
    # the engine's thread is descheduled for a while near the window's end.
    Rackbench::Test::StallingServer.open do |server|
      result = run_load(server.url, connections: 20, threads: 2, rate: 100, warmup_s: 0.5, duration_s: 1.5)
      assert_every_request_accounted(result)
      assert_equal 0, result.unsent
      assert_equal 0, result.error_count
      assert_operator result.requests, :>, 0
      assert_equal result.requests, result.late["scheduled"]
      wait_until(message: "server count") { server.responses == result.requests + result.warmup["requests"] }
    end
  end

  it "reports no offered rate and no unsent count in closed loop" do
    Rackbench::Test::StallingServer.open do |server|
      result = run_load(server.url, connections: 2, duration_s: 0.5)
      assert_operator result.requests, :>, 0
      assert_nil result.offered_rps
      assert_nil result.unsent
      assert_nil result.late
    end
  end
end
