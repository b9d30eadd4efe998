# frozen_string_literal: true

require "test_helper"
require "json"

# The engine's WebSocket document (doc/output.md, "rackbench-engine-ws")
# as the Ruby side reads it; the fixtures are real engine output against
# test/fixtures/ws_server.rb (a Cable broadcast through the HTTP endpoint
# with every 10th dropped, an echo whose server closed after 50 messages,
# a Cable echo in open loop over wss://).
describe Rackbench::WsLoadResult do
  def fixture(name) = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_ws_#{name}.json", __dir__)))

  it "reads a broadcast: delivery, the round trip to the last client, the window's edges" do
    r = Rackbench::WsLoadResult.new(fixture("broadcast"))
    assert_equal "broadcast", r.workload
    assert_equal 4, r.connected
    assert_equal r.requested, r.connected
    assert_in_delta 0.9, r.delivery_ratio, 1e-9
    assert_equal r.broadcast["rtt_us"], r.rtt_us
    assert_equal r.broadcast["delivered"], r.messages
    assert_empty r.connect_failures
    assert_nil r.echo
    assert_equal 4, r.cable["confirms"]
    assert_equal 10, r.broadcast["http"]["ok"] # POSTed to the app's endpoint
    %w[setup_start setup_end measure_start measure_end].each { |e| assert_kind_of Numeric, r.edges["#{e}_unix"] }
  end

  it "reads an echo and the connections the server closed" do
    r = Rackbench::WsLoadResult.new(fixture("echo"))
    assert_equal r.echo["latency_us"], r.rtt_us
    assert_nil r.delivery_ratio
    assert_equal 3, r.lost_count
    assert_equal ["lost server_close x 3: the server closed the WebSocket with 1001: going away"], r.failure_lines
  end

  it "is what LoadEngine returns for the WebSocket format" do
    engine = Rackbench::LoadEngine.new
    result = engine.send(:parse, File.read(File.expand_path("../fixtures/engine_result_ws_echo.json", __dir__)))
    assert_kind_of Rackbench::WsLoadResult, result
  end

  it "fails loudly on a document that breaks the contract" do
    cases = {
      ->(d) { d["format_version"] = 2 } => /expected rackbench-engine-ws 1/,
      ->(d) { d.delete("connect") } => /connect is nil/,
      ->(d) { d["connect"]["failures"].delete("refused") } => /connect.failures lacks refused/,
      ->(d) { d["broadcast"] = nil } => /broadcast is null for workload broadcast/,
      ->(d) { d["echo"] = {} } => /echo is present for workload broadcast/,
      ->(d) { d["broadcast"]["delivered"] -= 1 } => /delivered \+ missing is not expected/,
      ->(d) { d["broadcast"]["expected"] += 1 } => /is not broadcasts x receivers/,
      ->(d) { d["edges"].delete("measure_end_unix") } => /edges lacks measure_end_unix/,
      ->(d) { d["cpu"]["us_per_message"] = "x" } => /cpu.us_per_message/
    }
    cases.each do |breaks, message|
      doc = fixture("broadcast")
      breaks.call(doc)
      error = assert_raises(Rackbench::EngineError) { Rackbench::WsLoadResult.new(doc) }
      assert_match message, error.message
    end
  end

  it "matches doc/output.md both ways: every key written is documented, every documented key written" do
    text = File.read(File.expand_path("../../doc/output.md", __dir__))
    documented = text[/^## The load engine's WebSocket result.*?(?=^## )/m].scan(/^\| `([a-z0-9_.]+)`/).flatten
    # Keys that are data (close codes, the kinds with a reason) are not the contract's names.
    data_keyed = %w[close_codes connect.reasons lost.reasons]
    keys = lambda do |value, prefix|
      case value
      when Hash
        return [] if data_keyed.include?(prefix)

        value.flat_map { |k, v| [prefix ? "#{prefix}.#{k}" : k] + keys.call(v, prefix ? "#{prefix}.#{k}" : k) }
      when Array then value.first.is_a?(Hash) ? keys.call(value.first, prefix) : []
      else []
      end
    end
    written = %w[broadcast echo tls].flat_map { |name| keys.call(fixture(name), nil) }.uniq
    assert_empty written - documented, "keys missing from doc/output.md"
    assert_empty documented - written, "documented keys the engine does not write"
  end

  it "summarises a run for a person" do
    text = Rackbench::WsLoadSummary.new(Rackbench::WsLoadResult.new(fixture("broadcast"))).to_s
    assert_match(/\AWebSocket ws:\/\/127\.0\.0\.1:\d+\/cable for 0\.5s: broadcast, 4 clients \(Action Cable BenchmarkChannel\), 1 thread\n/, text)
    assert_match(/  Delivery:    36 of 40 \(90\.00%\) to 4 clients; 4 missing, 0 duplicates\n/, text)
    assert_match(/  RTT \(last\):  p50 .* \(9 broadcasts every client got\)\n/, text)
    assert_match(%r{  Broadcasts:  10, one every 0\.050s, POSTed to http://127\.0\.0\.1:\d+/broadcast; 0 unsent, 0 failed\n}, text)
    echo = Rackbench::WsLoadSummary.new(Rackbench::WsLoadResult.new(fixture("echo"))).to_s
    assert_match(/  Lost:        server_close 3 \(after they were ready\)\n               server_close: the server closed the WebSocket with 1001: going away\n/, echo)
  end
end
