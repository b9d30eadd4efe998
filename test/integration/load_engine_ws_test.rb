# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "socket"
require_relative "../fixtures/ws_server"

# The load engine's WebSocket clients against the fixture server
# (test/fixtures/ws_server.rb), which counts what it saw: the engine's
# accounting must match it, and every misbehaviour must cost exactly what
# it should (one connection, a counted failure, a missing delivery), never
# the run. Runs are short and bounded; nothing here depends on speed.
describe "load engine over WebSockets" do
  before { require_engine! }

  def ws_server(**options, &block)
    Rackbench::Test::WsServer.open(**options, &block)
  end

  def run_ws(url, **options)
    settings = Rackbench::WsLoadSettings.build(url: url, duration_s: 1.0, **options)
    Rackbench::LoadEngine.new.run(settings)
  end

  it "echoes: every message sent came back, as many as the server answered" do
    ws_server do |server|
      result = run_ws(server.url("/echo"), clients: 4, threads: 2, warmup_s: 0.2)
      assert_kind_of Rackbench::WsLoadResult, result
      assert_equal 4, result.connected
      assert_equal 4, server.count(:upgrades)
      echo = result.echo
      assert_operator echo["messages"], :>, 10
      assert_equal echo["sent"], echo["messages"]
      assert_equal 0, echo["timeouts"] + echo["lost"] + echo["stale"] + echo["foreign"]
      # Closed loop: nothing is in flight at the end, so the server answered
      # exactly what the engine sent, warmup and window.
      assert_equal echo["sent"] + echo["warmup"]["sent"], server.count(:messages)
      assert_equal server.count(:messages), result.frames["sent"]["text"]
      assert_empty server.errors
    end
  end

  it "counts a broadcast that never came as missing: every 10th dropped reads a delivery of 0.9" do
    ws_server(drop_every: 10) do |server|
      # Two threads: each counts its own clients' receipts, merged by number.
      result = run_ws(server.url("/broadcast"), clients: 6, threads: 2, workload: "broadcast", interval_s: 0.05)
      b = result.broadcast
      # 1 s at 50 ms: 20 broadcasts, whatever the machine's speed; the
      # server dropped the 10th and the 20th.
      assert_equal 20, b["broadcasts"]
      assert_equal 2, server.count(:dropped)
      assert_equal 6, b["receivers"]
      assert_equal 120, b["expected"]
      assert_equal 108, b["delivered"]
      assert_equal 12, b["missing"]
      assert_in_delta 0.9, result.delivery_ratio, 1e-9
      assert_equal 18, b["complete"]
      assert_equal 2, b["incomplete"]
      assert_equal 18, b["rtt_histogram"]["total"]
      dropped = b["per_broadcast"].select { |pb| pb["received"].zero? }.map { |pb| pb["seq"] }
      assert_equal [10, 20], dropped
      assert_equal 0, b["duplicates"]
    end
  end

  it "broadcasts through the app's HTTP endpoint to Action Cable subscribers" do
    ws_server(cable: true, drop_every: 10) do |server|
      result = run_ws(server.url("/cable"), clients: 5, workload: "broadcast", interval_s: 0.05, cable: true,
                                            broadcast_url: server.http_url("/broadcast"))
      b = result.broadcast
      assert_equal 20, b["broadcasts"]
      assert_equal 20, server.count(:posts)
      assert_equal({ "posts" => 20, "ok" => 20 }, b["http"].slice("posts", "ok"))
      assert_in_delta 0.9, result.delivery_ratio, 1e-9
      assert_equal 5, server.count(:subscriptions)
      assert_equal 5, result.cable["confirms"]
    end
  end

  it "tells the caller when the window opens and closes, after every client connected" do
    ws_server do |server|
      settings = Rackbench::WsLoadSettings.build(url: server.url, clients: 50, workload: "connect", duration_s: 0.3)
      seen = []
      result = Rackbench::LoadEngine.new.run(settings, on_phase: ->(phase) { seen << [phase, server.count(:upgrades)] })
      assert_equal [[:measure, 50], [:end, 50]], seen
      assert_equal 50, result.connected
    end
  end

  it "speaks Action Cable: welcome, subscribe with params, confirm, pings, the echo action" do
    ws_server(cable: true) do |server|
      result = run_ws(server.url("/cable"), clients: 3, cable: true, channel: "RoomChannel",
                                            channel_params: '{"room":"7"}')
      assert_equal '{"channel":"RoomChannel","room":"7"}', result.settings["identifier"]
      cable = result.cable
      assert_equal 3, cable["welcomes"]
      assert_equal 3, cable["confirms"]
      assert_operator cable["pings"], :>=, 3 # one right after each welcome
      assert_equal 0, cable["unexpected"]
      assert_operator result.echo["messages"], :>, 10
      assert_equal 0, result.echo["foreign"]
    end
  end

  it "names a refused subscription, a refused upgrade, a wrong key and a closed port as failures by reason" do
    ws_server(cable: true, reject: true) do |server|
      result = run_ws(server.url("/cable"), clients: 2, cable: true)
      assert_equal({ "rejected" => 2 }, result.connect_failures)
      assert_match(/rejected the subscription/, result.connect["reasons"]["rejected"])
    end
    ws_server(status: 403) do |server|
      result = run_ws(server.url, clients: 2)
      assert_equal({ "status" => 2 }, result.connect_failures)
      assert_match(/"403 Forbidden", not 101/, result.connect["reasons"]["status"])
      assert_nil result.time_to_all_connected_s
    end
    ws_server(bad_accept: true) do |server|
      result = run_ws(server.url, clients: 2)
      assert_equal({ "handshake" => 2 }, result.connect_failures)
      assert_match(/Sec-WebSocket-Accept/, result.connect["reasons"]["handshake"])
    end
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
    result = run_ws("ws://127.0.0.1:#{port}/", clients: 2, workload: "connect")
    assert_equal({ "refused" => 2 }, result.connect_failures)
  end

  it "ends one connection with a counted error for a malformed frame, and the run goes on" do
    %i[rsv masked opcode long_ping bad_utf8 stray_continuation].each do |kind|
      ws_server(malformed: kind, malformed_after: 3) do |server|
        result = run_ws(server.url, clients: 3, duration_s: 0.5)
        assert_equal 1, server.count(:malformed), kind
        assert_equal 1, result.lost_count, kind
        assert_equal 1, result.lost["by_kind"]["malformed"], kind
        assert_match(/\Athe server sent /, result.lost["reasons"]["malformed"], kind)
        assert_equal 1, result.echo["lost"], kind
        assert_operator result.echo["messages"], :>, 3, kind
        refute result.interrupted?
      end
    end
  end

  it "reads fragmented messages with a ping between the fragments, and sends fragmented binary ones" do
    ws_server(fragment: 7) do |server|
      result = run_ws(server.url, clients: 2, message_bytes: 100)
      messages = result.echo["messages"]
      assert_operator messages, :>, 5
      assert_equal messages, result.frames["fragmented_messages"]
      assert_equal messages, result.frames["pongs_sent"]
      assert_operator result.frames["received"]["continuation"], :>=, messages * 14
    end
    ws_server do |server|
      result = run_ws(server.url, clients: 2, binary: true, fragment_bytes: 10, message_bytes: 100)
      sent = result.echo["sent"] + result.echo["warmup"]["sent"]
      assert_equal sent, result.frames["sent"]["binary"]
      assert_equal sent * 9, result.frames["sent"]["continuation"]
      assert_equal sent, server.count(:messages)
      assert_equal result.echo["sent"], result.echo["messages"]
    end
  end

  it "counts the server's close frames by code as lost connections" do
    ws_server(close_after: 3) do |server|
      result = run_ws(server.url, clients: 3)
      assert_equal 3, result.lost["by_kind"]["server_close"]
      assert_equal({ "1001" => 3 }, result.to_h["close_codes"])
      assert_match(/1001: going away/, result.lost["reasons"]["server_close"])
      # Two echoed, the third answered with the close.
      assert_equal 9, server.count(:messages)
    end
  end

  it "connects a ramp of clients and holds them, with the window's edges to sample the server by" do
    ws_server do |server|
      result = run_ws(server.url, clients: 200, workload: "connect", ramp_s: 0.5, duration_s: 0.5)
      assert_equal 200, result.connected
      assert_equal 200, server.count(:upgrades)
      assert_equal 0, result.lost_count
      # The last client opens at 199/200 of the ramp: nothing can be faster.
      assert_operator result.time_to_all_connected_s, :>=, 0.5 * 199 / 200
      assert_equal 200, result.connect["timeline"].sum { |s| s["connected"] }
      edges = result.edges
      assert_operator edges["setup_end_s"], :>=, edges["setup_start_s"] + result.time_to_all_connected_s - 0.001
      assert_operator edges["measure_start_s"], :>, edges["setup_end_s"]
      assert_in_delta 0.5, edges["measure_end_s"] - edges["measure_start_s"], 0.001
      assert_in_delta edges["measure_start_unix"] - edges["setup_start_unix"],
                      edges["measure_start_s"] - edges["setup_start_s"], 0.001
      # The engine's close at the end: a close frame from every client.
      wait_until(message: "the server to read every close frame") { server.count(:closes) == 200 }
    end
  end

  it "raises the open-file limit for thousands of clients, or refuses the run in one line" do
    ws_server do |server|
      args = [engine_binary, "-c", "1500", "-d", "0.2", "--workload", "connect", "--timeout", "10s", server.url]
      out, status = Open3.capture2("bash", "-c", 'ulimit -Sn 1024; exec "$@"', "bash", *args)
      assert status.success?
      doc = Rackbench::WsLoadResult.new(JSON.parse(out))
      assert doc.to_h["nofile"]["raised"]
      assert_equal 1024, doc.to_h["nofile"]["soft_before"]
      assert_equal 1500, doc.connected
    end
    # Without the right to raise it (the hard limit lowered first), one line.
    _out, err, status = Open3.capture3("bash", "-c", 'ulimit -Hn 512; exec "$@"', "bash",
                                       engine_binary, "-c", "1000", "-d", "0.2", "ws://127.0.0.1:1/")
    if Process.uid.zero?
      # root may raise its hard limit again: the run goes on (and fails to connect)
      assert status.success?, err
    else
      assert_equal 2, status.exitstatus
      assert_match(/\Arackbench-engine: 1000 connections need 1066 open files/, err)
    end
  end

  it "runs over wss:// through the engine's TLS, the certificate checked" do
    Dir.mktmpdir("rackbench-wss") do |dir|
      cert = Rackbench::Tls.certificate(File.join(dir, "tls"))
      ws_server(tls: cert) do |server|
        result = run_ws(server.url("/broadcast"), clients: 3, workload: "broadcast", interval_s: 0.1,
                                                  ca_file: cert.ca_path)
        assert_equal 3, result.connected
        assert_equal 1.0, result.delivery_ratio
        tls = result.tls
        assert_equal 4, tls["handshakes"] # the clients and the broadcaster
        assert_equal "TLSv1.3", tls["version"]
      end
      ws_server(tls: cert) do |server|
        result = run_ws(server.url, clients: 2) # the system's store does not know the run's authority
        assert_equal({ "tls" => 2 }, result.connect_failures)
        assert_match(/certificate did not check out/, result.connect["reasons"]["tls"])
      end
    end
  end

  it "is what `rackbench load ws://` runs and prints" do
    ws_server(cable: true) do |server|
      out = IO.popen([RbConfig.ruby, "-Ilib", "exe/rackbench", "load", "-c", "3", "-d", "0.5", "--cable",
                      "--workload", "broadcast", "--interval", "100ms", server.url("/cable")],
                     chdir: File.expand_path("../..", __dir__), err: %i[child out], &:read)
      assert $?.success?, out
      assert_match(%r{\AWebSocket ws://127\.0\.0\.1:\d+/cable for 0\.5s: broadcast, 3 clients \(Action Cable BenchmarkChannel\)}, out)
      assert_match(/Delivery:    15 of 15 \(100\.00%\) to 3 clients/, out)
      assert_match(/RTT \(last\):  p50 /, out)
    end
  end
end
