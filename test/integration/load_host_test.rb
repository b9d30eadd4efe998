# frozen_string_literal: true

require "test_helper"
require "open3"
require "json"
require_relative "../support/test_network"
require_relative "../support/ssh_host"
require_relative "../fixtures/fixture_server"

# The load engine on a host of its own (load.host), with real parts: the
# load host is a network namespace running Debian's OpenSSH server with a
# key made here, and every packet it sends is held 1 ms (tc netem, or on a
# kernel without netem the test's delay line). This machine is the
# benchmark host. The engine's counts are exact against the server's own,
# the 1 ms shows in the stored round trip and in p50, and a missing engine
# or a failing ssh is one line before anything is measured.
describe "the load engine on a load host over ssh" do
  ROOT = File.expand_path("../..", __dir__)
  ENGINE = File.join(ROOT, "lib", "rackbench-engine")

  let(:dir) { Dir.mktmpdir("rackbench-load-host") }
  after { FileUtils.rm_rf(dir) }
  before { require_engine! }

  def with_load_host
    Rackbench::Test::TestNetwork.open do |net|
      host = net.add_host("loadgen", delay_ms: 1)
      ssh = Rackbench::Test::SshHost.new(net, host, dir).start
      yield net, host, ssh
    end
  end

  it "counts exactly what the server answered, the round trip holding the link's delay" do
    with_load_host do |net, host, ssh|
      remote = Rackbench::RemoteHost.new("ssh://root@#{host.address}#{ENGINE}",
                                         env: { "RACKBENCH_SSH_COMMAND" => ssh.ssh_command }).prepare!
      assert_equal net.gateway, remote.server_address, "the load host reaches this host on the bridge"
      assert_equal `#{ENGINE} --version`.strip, remote.engine_version
      rtt = remote.round_trip
      assert_operator rtt["min"], :>=, 1000.0, "every handshake waits out the 1 ms: #{rtt}"
      Rackbench::Test::FixtureServer.open(mode: :ok, host: net.gateway) do |server|
        phases = []
        settings = Rackbench::LoadSettings.build(url: server.url, connections: 2, warmup_s: 0.3, duration_s: 1.0,
                                                 allow_remote: true)
        result = remote.engine.run(settings, on_phase: ->(phase) { phases << phase })
        assert_equal %i[measure end], phases, "the window's edges came back through the session"
        assert_operator result.requests, :>, 50
        assert_equal server.requests, result.requests + result.warmup["requests"], "the server's own count"
        assert_equal({ "200" => result.requests }, result.status)
        assert_operator result.latency_us["p50"], :>=, 1000.0, "each response waits out the 1 ms"
      end
    end
  end

  it "runs an experiment with load.host as a dimension: the round trip stored, p50 and counts as measured" do
    with_load_host do |net, host, ssh|
      url = "ssh://root@#{host.address}#{ENGINE}"
      File.write(File.join(dir, "remote.yml"), <<~YAML)
        name: load-host
        servers: [puma]
        apps: [{ name: tally, path: #{File.join(ROOT, "test", "fixtures", "apps", "tally")} }]
        inside: off
        load:
          host: [local, "#{url}"]
          connections: 2
          warmup: 0.3s
          duration: 1s
          timeout: 2s
          headers: { X-Tally: "1" }
      YAML
      out, err, status = rackbench("run", "remote.yml", "--results", "results", "--json",
                                   env: { "RACKBENCH_SSH_COMMAND" => ssh.ssh_command }, chdir: dir)
      assert status.success?, err
      assert_equal 2, JSON.parse(out)["configs"].size
      records = Rackbench::Store.open(File.join(dir, "results"), &:trials)
      remote, local = records.partition { |r| r.dims["load.host"] == url }.map(&:first)
      assert_nil local.network
      network = remote.network
      assert_equal [url, net.gateway], network.values_at("load_host", "server_address")
      assert_operator network["round_trip_us"]["min"], :>=, 1000.0, network.to_s
      assert_operator remote.latency_us["p50"], :>=, 1000.0, "p50 holds the link's 1 ms"
      [local, remote].each do |record|
        tally = File.read(File.join(dir, "results", "work", File.basename(record.log_path, ".log"), "tally.count")).to_i
        assert_equal tally, record.requests + record.warmup["requests"], "#{record.key}: the server's own count"
      end
      refute_empty net.pids(host), "sshd runs on"
    end
  end

  it "says in one line, before any measurement, that the engine is missing or ssh failed" do
    with_load_host do |_net, host, ssh|
      env = { "RACKBENCH_SSH_COMMAND" => ssh.ssh_command }
      { "ssh://root@#{host.address}/no/such/rackbench-engine" =>
          /\Arackbench: load host ssh:\/\/root@#{host.address}\/no\/such\/rackbench-engine: no engine at \/no\/such\/rackbench-engine there .*install rackbench on it/,
        "ssh://root@#{host.address}:2222#{ENGINE}" =>
          /\Arackbench: load host ssh:\/\/root@#{host.address}:2222#{ENGINE}: ssh failed: .*Connection refused/ }.each do |url, message|
        File.write(File.join(dir, "bad.yml"), <<~YAML)
          name: bad-load-host
          servers: [puma]
          apps: [rack-hello]
          load: { host: "#{url}", timeout: 2s, duration: 1s }
        YAML
        _, err, status = rackbench("run", "bad.yml", "--results", "bad", env: env, chdir: dir)
        refute status.success?
        assert_match message, err
        assert_equal 1, err.lines.grep(/\Arackbench: /).size, err
        refute File.exist?(File.join(dir, "bad", "results.db")), "nothing stored: #{url}"
      end
    end
  end
end
