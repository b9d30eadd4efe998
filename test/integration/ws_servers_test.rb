# frozen_string_literal: true

require "test_helper"
require "support/live_process"

# WebSocket trials (Trial::Ws) of the built-in ws-rack app on the servers
# ws_trials_test.rb does not boot: Iodine and Agoo (their own WebSocket,
# the Rack upgrade spec: env["rack.upgrade?"]) and Passenger (a full
# hijack, its core told to let a taken-over socket go). One run through the
# command line, echo and broadcast on each, on the system's ruby: every
# trial ok with every client connected and nothing lost, echoes answered,
# every broadcast delivered to every client, the upgrade's proof naming a
# proven process of the trial's own server and that server's API, and
# nothing of the run left afterwards. Windows are short and clients few:
# these check what the trials count and leave behind, never speed.
module WsServersTestFixtures
  CLIENTS = 20
  # The API each server's upgrade must come through (the proof's "via").
  SERVER_APIS = { "iodine" => "rack.upgrade", "agoo" => "rack.upgrade", "passenger" => "rack.hijack" }.freeze
end

describe "WebSocket trials on Iodine, Agoo and Passenger (integration)" do
  before { require_engine! }

  # The one run, shared by every test: [stdout, stderr, status, results
  # dir, its parent]. load.timeout bounds a client's connect, an echo and
  # the wait for the last broadcast: a guard against a hang, never a
  # claim, so it follows how busy the machine is now.
  def self.outcome
    @outcome ||= begin
      dir = Dir.mktmpdir("rackbench-ws-servers")
      experiment = File.join(dir, "ws-servers.yml")
      File.write(experiment, <<~YAML)
        name: ws-servers
        seed: 11
        rubies: [ruby]
        servers: [#{WsServersTestFixtures::SERVER_APIS.keys.join(", ")}]
        apps: [ws-rack]
        load: { workload: [echo, broadcast], clients: #{WsServersTestFixtures::CLIENTS}, interval: 100ms,
                duration: 1s, warmup: 0.3s, timeout: #{(5 * busy_factor).ceil}s }
      YAML
      results = File.join(dir, "results")
      out, err, status = rackbench("run", experiment, "--results", results)
      [out, err, status, results, dir]
    end
  end

  Minitest.after_run { FileUtils.rm_rf(outcome[4]) if @outcome }

  def results = self.class.outcome[3]

  def run_output = "#{self.class.outcome[0]}\n#{self.class.outcome[1]}"

  def trials
    Rackbench::Store.open(results, &:trials)
  end

  # The server's two trials, by workload.
  def trials_of(server)
    found = trials.select { |t| t.server == server }.to_h { |t| [t.result["workload"], t] }
    assert_equal %w[broadcast echo], found.keys.sort, "#{server}'s trials:\n#{run_output}"
    found
  end

  def assert_served_by(server, record)
    workload = record.result["workload"]
    assert record.ok?, "#{server} #{workload}: #{record.reason}"
    clients = WsServersTestFixtures::CLIENTS
    assert_equal [clients, clients], [record.result.dig("settings", "clients"),
                                      record.result.dig("connect", "connected")]
    assert_equal 0, record.result.dig("lost", "total"), "#{server} #{workload}: #{record.result["lost"]}"
    websocket = record.identity.fetch("websocket")
    assert_equal "/ws/#{workload}?rackbench_proof=1", websocket["path"]
    proof = websocket.fetch("proof")
    # The upgrade was served by a process the identity check proved to run
    # the trial's ruby and bundle, through the server's own API.
    assert_equal WsServersTestFixtures::SERVER_APIS.fetch(server), proof["via"], "#{server} #{workload}"
    assert_includes record.identity["processes"].map { |p| p["pid"] }, proof["pid"]
    assert record.gem_versions.key?(server), "#{server}'s gem in the trial's bundle: #{record.gem_versions}"
    proof
  end

  def assert_echoes_and_broadcasts(server)
    by_workload = trials_of(server)
    by_workload.each_value { |record| assert_served_by(server, record) }

    echo = by_workload.fetch("echo")
    assert_operator echo.result.dig("echo", "messages"), :>, 0
    assert_equal [0, 0], echo.result["echo"].values_at("timeouts", "lost")

    broadcast = by_workload.fetch("broadcast")
    figures = broadcast.result["broadcast"]
    assert_operator figures["broadcasts"], :>, 0
    assert_equal [figures["broadcasts"] * WsServersTestFixtures::CLIENTS, 0], figures.values_at("expected", "missing")
    assert_equal 1.0, broadcast.reading.delivery_ratio(broadcast)
    by_workload
  end

  it "runs echo and broadcast on Iodine through its own WebSocket, every broadcast delivered" do
    assert_echoes_and_broadcasts("iodine")
  end

  it "runs echo and broadcast on Agoo through its own WebSocket, every broadcast delivered" do
    assert_echoes_and_broadcasts("agoo")
  end

  it "runs echo and broadcast on Passenger through a full hijack in an app process, every broadcast delivered" do
    assert_echoes_and_broadcasts("passenger").each_value do |record|
      # The upgrade reached an app process the preloader forked, behind
      # Passenger's core, never the boot process rackbench started.
      proof = record.identity.dig("websocket", "proof")
      main, *others = record.identity["processes"]
      refute_equal main["pid"], proof["pid"]
      assert_equal "fork", others.find { |p| p["pid"] == proof["pid"] }&.fetch("event")
      assert_match(/\APhusion_Passenger/, proof["server"])
    end
  end

  it "stops every trial's server itself, and leaves nothing of the run running" do
    status = self.class.outcome[2]
    assert status.success?, run_output
    assert_match(/6 ok, 0 failed/, run_output)
    stored = trials
    assert_equal 6, stored.size
    # Each server was stopped by its trial (Iodine and Passenger on their
    # TERM; Agoo once outlived its 10-s grace in a CI run and was KILLed by
    # the trial's stop, as the stop is built to); the run's watchdog found
    # nothing at the end that a stop had missed (Runner#with_watchdog).
    stored.each do |record|
      stop = File.read(record.log_path)[/^\[rackbench\] stopped in .*$/]
      refute_nil stop, "#{record.server} #{record.result["workload"]}: no stop in its log"
      refute_match(/KILL/, stop, "#{record.server} #{record.result["workload"]}") unless record.server == "agoo"
    end
    refute_match(/still running after its last stop/, run_output)
    pids = stored.flat_map { |record| record.identity["processes"].map { |p| p["pid"] } }
    assert_empty pids.select { |pid| Rackbench::Test::LiveProcess.alive?(pid) }, "the servers' ruby processes"
    # Passenger's agents (watchdog, core) run no ruby: found by the
    # results directory in their command line, or the run's marker.
    marker = Rackbench::Watchdog.marker_entry(results)
    left = Dir.glob("/proc/[0-9]*").select do |proc_dir|
      File.binread(File.join(proc_dir, "cmdline")).include?(results) ||
        File.binread(File.join(proc_dir, "environ")).split("\0").include?(marker)
    rescue SystemCallError
      false
    end
    assert_empty left.map { |proc_dir| File.basename(proc_dir) }, "processes of the run still alive"
  end
end
