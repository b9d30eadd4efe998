# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "support/live_process"

# WebSocket trials (Trial::Ws) through `rackbench run` with real servers, on
# the system's ruby: ws-rack on Puma for each workload, cable-rails (Action
# Cable, whose Rails 7.2 lock the system ruby's rails-hello bundle shares
# most of) on Puma, and a user's own app (test/fixtures/apps/ws-faults) that
# misbehaves on request: a malformed frame to one client, every 10th
# broadcast dropped, every 4th client never sent one; and a server killed in
# the middle of a broadcast window. Windows are short and client counts
# small: these check what the trials count, store and leave behind, never
# speed.
module WsTrialsTestFixtures
  FAULTS_APP = File.expand_path("../fixtures/apps/ws-faults", __dir__)

  def self.experiment(name, apps:, load:, servers: "[puma]", extra: "")
    <<~YAML
      name: #{name}
      seed: 7
      rubies: [ruby]
      servers: #{servers}
      apps: #{apps}
      load: #{load}
      #{extra}
    YAML
  end

  # A companion of the test's: the trial's server is killed (SIGKILL, its
  # main process) as soon as the engine's window opens, while the
  # broadcasts go out.
  class Killer < Rackbench::Trial::Http::Companion
    ORDER = 99
    attr_reader :killed

    def part(_scene) = Part.new(self)

    def kill(pid)
      @killed = pid
      Process.kill("KILL", pid)
    end

    class Part < Rackbench::Trial::Http::Companion::Part
      def initialize(owner)
        super()
        @owner = owner
      end

      def after_boot(booted) = @server = booted.server
      def window_started = @owner.kill(@server.pid)
    end
  end
end

describe "WebSocket trials (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-ws-trials") }
  after { FileUtils.rm_rf(dir) }

  # load.timeout bounds a client's connect, an echo and the wait for the
  # last broadcast: a guard against a hang, never a claim, so it follows
  # how busy the machine is now (at load 9 on 2 CPUs an avalanche of 200
  # once got no answer to any Upgrade within 5 s). Only the deaf clients'
  # trial waits it out whole.
  def guard_timeout = "#{(5 * busy_factor).ceil}s"

  def run_file(text, name)
    file = File.join(dir, "#{name}.yml")
    File.write(file, text)
    results = File.join(dir, name)
    out, err, status = rackbench("run", file, "--results", results)
    [Rackbench::Store.open(results, &:trials), out, err, status]
  end

  it "runs ws-rack's three workloads on Puma, proves who served the upgrade, and reads the memory per connection" do
    records, out, err, = run_file(WsTrialsTestFixtures.experiment(
      "ws-rack-puma", apps: "[ws-rack]",
      load: "{ workload: [connect, echo, broadcast], clients: 20, interval: 100ms, duration: 1s, warmup: 0.5s, " \
            "timeout: #{guard_timeout} }"
    ), "ws-rack")
    assert_equal %w[broadcast connect echo], records.map { |r| r.result["workload"] }.sort, "#{out}\n#{err}"
    records.each do |record|
      assert record.ok?, "#{record.result["workload"]}: #{record.reason}"
      assert_equal [20, 20], [record.result.dig("connect", "connected"), record.result.dig("settings", "clients")]
      proof = record.identity.dig("websocket", "proof")
      assert_equal "rack.hijack", proof["via"]
      assert_includes record.identity["processes"].map { |p| p["pid"] }, proof["pid"]
      assert_operator record.websocket.dig("idle", "pss_bytes"), :>, 0
    end
    by_workload = records.to_h { |r| [r.result["workload"], r] }
    broadcast = by_workload.fetch("broadcast")
    assert_equal 1.0, broadcast.reading.delivery_ratio(broadcast)
    # (The server's CPU is counted in the kernel's ticks: a short, light
    # window may count none.)
    refute_nil broadcast.reading.cpu_us_per_broadcast(broadcast)
    connect = by_workload.fetch("connect")
    refute_nil connect.reading.memory_per_connection_bytes(connect)
    assert_operator by_workload.fetch("echo").result.dig("echo", "messages"), :>, 0
    assert_match(/delivery/, out)
  end

  it "runs cable-rails' channel on Puma: Action Cable's subscription, echo and broadcast" do
    records, out, err, = run_file(WsTrialsTestFixtures.experiment(
      "cable-rails-puma", apps: "[cable-rails]",
      load: "{ workload: [echo, broadcast], clients: 10, interval: 100ms, duration: 1s, warmup: 0.5s, " \
            "timeout: #{guard_timeout} }"
    ), "cable")
    assert_equal 2, records.size, "#{out}\n#{err}"
    records.each do |record|
      assert record.ok?, record.reason
      assert_equal 10, record.result.dig("cable", "confirms") - (record.result["workload"] == "broadcast" ? 1 : 0)
      assert_equal "action_cable", record.identity.dig("websocket", "proof", "via")
      assert_equal "actioncable-v1-json", record.identity.dig("websocket", "protocol")
    end
  end

  it "counts a malformed frame as one lost connection, and never delivers what the server dropped or withheld" do
    # One run, one trial per fault (WS_FAULT is a dimension), 200 clients:
    # one connection lost is within the 1% a trial may lose.
    app = "[{ name: ws-faults, path: #{WsTrialsTestFixtures::FAULTS_APP}, websocket: { path: '/ws/{workload}', " \
          "cable: false, broadcast_path: /broadcast } }]"
    records, out, err, = run_file(WsTrialsTestFixtures.experiment(
      "ws-faults", apps: app, extra: "env: { WS_FAULT: [malformed, drop10, deaf4] }",
      load: "{ workload: broadcast, broadcaster: http, clients: 200, threads: 2, interval: 100ms, duration: 1.5s, " \
            "warmup: 0s, timeout: #{guard_timeout} }"
    ), "faults")
    by_fault = records.to_h { |r| [r.dims["env.WS_FAULT"], r] }
    assert_equal %w[deaf4 drop10 malformed], by_fault.keys.sort, "#{out}\n#{err}"
    by_fault.each_value { |record| assert record.ok?, "#{record.dims}: #{record.reason}" }

    record = by_fault.fetch("malformed")
    lost = record.result["lost"]
    assert_equal [1, 1], [lost["total"], lost["by_kind"]["malformed"]]
    assert_match(/reserved bit|RSV/i, lost["reasons"]["malformed"])
    assert_equal({ "malformed" => 1 }, record.reading.connection_failures(record))

    # How many broadcasts the window holds is the machine's to say (the
    # HTTP broadcaster waits for each POST's answer): the first is always
    # dropped, and exactly the dropped ones are missing.
    record = by_fault.fetch("drop10")
    sent = record.result.dig("broadcast", "per_broadcast")
    dropped, delivered = sent.partition { |b| b["seq"] % 10 == 1 }
    assert_equal 1, sent.first["seq"]
    assert(dropped.all? { |b| b["received"].zero? })
    assert(delivered.all? { |b| b["received"] == 200 })
    counts = record.result["broadcast"]
    assert_equal [sent.size * 200, delivered.size * 200], counts.values_at("expected", "delivered")
    # The document writes the ratio with 6 decimals: 14 of 15 is 0.933333.
    ratio = record.reading.delivery_ratio(record)
    assert_in_delta delivered.size.fdiv(sent.size), ratio, 5e-7
    assert_operator ratio, :<, 1.0

    # Fifty clients of two hundred never got a broadcast: each is missing from every one.
    figures = by_fault.fetch("deaf4").result["broadcast"]
    assert_equal 0.75, figures["delivery_ratio"]
    assert_equal figures["broadcasts"] * 50, figures["missing"]
    assert_equal 0, figures["complete"]
  end

  it "fails a trial whose server is killed mid-broadcast, with the reason, and leaves nothing behind" do
    killer = nil
    experiment = Rackbench::Experiment.parse(WsTrialsTestFixtures.experiment(
      "ws-killed", apps: "[ws-rack]",
      load: "{ workload: broadcast, clients: 20, interval: 50ms, duration: 2s, warmup: 0s, timeout: 2s }"
    ), source: "killed.yml", base_dir: dir)
    companions = Rackbench::Trial::Http.companions.merge(killer: ->(setup) { killer = WsTrialsTestFixtures::Killer.new(setup) })
    results = File.join(dir, "killed")
    Rackbench::Runner.new(source: experiment, results_dir: results, out: StringIO.new, err: StringIO.new,
                          collaborators: { companions: companions }).run
    record = Rackbench::Store.open(results, &:trials).first
    assert_equal "failed", record.status
    assert_match(/server was killed by signal 9 \(SIGKILL\) during the measurement/, record.reason)
    refute_nil killer.killed
    refute Rackbench::Test::LiveProcess.alive?(killer.killed)
    # Nothing of the trial's is left: no process in the server's group.
    assert_raises(Errno::ESRCH) { Process.kill(0, -killer.killed) }
  end
end
