# frozen_string_literal: true

require "test_helper"

describe Rackbench::WsLoadSettings do
  def build(**options)
    Rackbench::WsLoadSettings.build(url: "ws://127.0.0.1:3000/cable", **options)
  end

  it "turns into the engine's arguments, only what differs from its defaults beyond the always-named ones" do
    s = build(clients: 2000, workload: "connect", ramp_s: 5, duration_s: 30, threads: 2)
    assert_equal %w[-c 2000 -t 2 -d 30s -w 0s --timeout 2s --seed 1 --workload connect --message-bytes 64
                    --max-message-bytes 1048576 --ramp 5s], s.engine_arguments
    engine = Rackbench::LoadEngine.new(binary: "/bin/engine")
    assert_equal ["/bin/engine", *s.engine_arguments, "ws://127.0.0.1:3000/cable"], engine.argv(s)
  end

  it "names a broadcast's interval, its HTTP broadcaster and Action Cable's channel" do
    s = build(workload: "broadcast", interval_s: 0.1, broadcast_url: "http://127.0.0.1:3000/broadcast", cable: true,
              channel: "RoomChannel", channel_params: '{"room":"1"}', headers: ["Cookie: a=1"])
    args = s.engine_arguments
    assert_equal "100000us", args[args.index("--interval") + 1]
    assert_equal "http://127.0.0.1:3000/broadcast", args[args.index("--broadcast-url") + 1]
    assert_equal %w[--cable --channel RoomChannel --echo-action echo --broadcast-action broadcast --channel-params
                    {"room":"1"}], args[args.index("--cable"), 9]
    assert_equal ["-H", "Cookie: a=1"], args[args.index("-H"), 2]
  end

  it "bounds the run: ramp, a timeout for the last client, warmup, window, the drain" do
    assert_in_delta 5 + 2 + 1 + 30 + 2, build(ramp_s: 5, warmup_s: 1, duration_s: 30).max_run_s
    refute build.count?
    assert build.websocket?
    refute Rackbench::LoadSettings.build(url: "http://127.0.0.1/").websocket?
  end

  it "refuses what does not fit, naming the setting" do
    {
      { url: "http://127.0.0.1/" } => /invalid url/,
      { workload: "storm" } => /invalid workload "storm"/,
      { clients: 0 } => /invalid clients 0/,
      { threads: 11 } => /at most clients \(10\)/,
      { rate: 10, workload: "broadcast" } => /does not apply to broadcast/,
      { broadcast_url: "http://127.0.0.1/b" } => /broadcast_url needs workload broadcast/,
      { broadcast_url: "ws://127.0.0.1/b", workload: "broadcast" } => /an http:\/\/ URL/,
      { channel: "Room" } => /channel needs cable/,
      { cable: true, binary: true } => /Action Cable speaks JSON text/,
      { cable: true, channel_params: "[1]" } => /a JSON object/,
      { message_bytes: 2000, max_message_bytes: 1000 } => /at least message_bytes/,
      { insecure: true } => /wss:\/\/ URLs only/,
      { interval_s: 0 } => /invalid interval/,
      { nope: 1 } => /unknown WebSocket setting nope/
    }.each do |options, message|
      error = assert_raises(Rackbench::UsageError, options.inspect) { build(**options) }
      assert_match message, error.message
    end
  end
end
