# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# A proxied trial over the fakes (Trial::Http with a fake proxy launcher):
# the engine targets the proxy, the proxy's window follows the server's,
# the proxy stops before the server and its document is stored; a proxy
# that cannot start or dies fails the trial with its reason; a missing
# program is refused up front; and a trial without a proxy has none.
describe "a trial behind a proxy" do
  let(:dir) { Dir.mktmpdir("rackbench-proxy-trial") }
  let(:out) { StringIO.new }
  let(:install) { Fakes.install }
  let(:engine) { Fakes::Engine.new }
  let(:launcher) { Fakes::Launcher.new }
  let(:proxy_launcher) { Fakes::ProxyLauncher.new }
  let(:missing) { [] }
  let(:proxies) { ->(name) { Fakes::ProxyTopology.new(name, missing: missing.include?(name)) } }

  after { FileUtils.rm_rf(dir) }

  def experiment(proxy)
    Rackbench::Experiment.parse(<<~YAML, source: "proxy.yml", base_dir: dir)
      name: proxy-trial
      rubies: [ruby]
      servers: [puma]
      apps: [rack-hello]
      #{proxy ? "proxy: #{proxy}" : ""}
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
  end

  def run_trials(exp, proxy_launcher: self.proxy_launcher)
    collaborators = { engine: engine, launcher: launcher, bundles: Fakes::Bundles.new,
                      companions: Fakes.companions(proxy: { proxies: proxies, launcher: proxy_launcher }) }
    summary = Rackbench::Runner.new(source: exp, results_dir: dir, out: out, err: StringIO.new, installs: [install],
                                    layout: Rackbench::Runner::CpuLayout.new(server_cpus: [0], engine_cpus: [1]),
                                    environment: { "test" => true }, stop_grace_s: 0,
                                    parent_env: { "PATH" => "/usr/bin:/bin" }, collaborators: collaborators,
                                    watchdog: Fakes::Watchdog.new).run
    [summary, Rackbench::Store.open(dir, &:trials)]
  end

  it "sends the load to the proxy, samples it over the window, stops it before the server and stores it" do
    _, records = run_trials(experiment("[none, nginx-cache]"))
    direct = records.find { |r| r.dims["proxy"] == "none" }
    proxied = records.find { |r| r.dims["proxy"] == "nginx-cache" }
    assert direct.ok? && proxied.ok?
    assert_nil direct.proxy, "no proxy, no proxy document"
    assert_equal 1, proxy_launcher.launches.size, "a proxy for the proxied trial only"
    ports = engine.settings.map { |s| URI(s.url).port }.sort
    assert_equal [Fakes::RunningProxy::PORT, 9], ports, "the proxied trial's load goes to the proxy, the other's to the server"
    launch = proxy_launcher.launches.first
    assert_equal 9, launch[:server].port, "the upstream is the trial's own server"
    assert_equal [0], launch[:layout].server_cpus, "on the server's CPUs"
    assert_equal Rackbench::Watchdog.marker_env(dir), launch[:marker_env]
    assert_equal %i[start stop stop_process], proxy_launcher.proxies.first.events
    assert_equal({ "hits" => 9, "misses" => 1, "uncached" => 0 }, proxied.proxy["cache"])
    assert_equal "nginx-cache", proxied.proxy["name"]
    assert_match(/nginx-cache/, proxied.log_path, "its own log and directory")
  end

  it "fails the trial with the proxy's reason when it cannot start, the server stopped, nothing measured" do
    failing = Fakes::ProxyLauncher.new { Rackbench::SetupError.new("proxy nginx: port 8 is already in use on 127.0.0.1") }
    summary, records = run_trials(experiment("nginx"), proxy_launcher: failing)
    assert_equal [0, 1], [summary.ok, summary.failed]
    assert_equal "proxy nginx: port 8 is already in use on 127.0.0.1", records.first.reason
    assert_equal 0, engine.calls
    assert_equal 1, launcher.servers.first.stops
    assert_nil records.first.proxy
  end

  it "fails the trial when the proxy dies during the measurement" do
    dying = Fakes::ProxyLauncher.new
    def dying.start(keywords)
      super.tap { |proxy| proxy.alive = false }
    end
    _, records = run_trials(experiment("varnish"), proxy_launcher: dying)
    assert_equal "failed", records.first.status
    assert_match(/\Aproxy varnish: server was killed by signal 9 \(SIGKILL\) during the measurement/, records.first.reason)
    assert_equal [:start, :stop, :stop_process], dying.proxies.first.events
    assert_equal 1, launcher.servers.first.stops
  end

  it "refuses up front the configurations whose proxy is not installed, and runs the others" do
    missing << "varnish"
    summary, records = run_trials(experiment("[none, varnish]"))
    assert_equal [1, 0, 1], [summary.ok, summary.failed, summary.skipped]
    assert_equal ["none"], records.map { |r| r.dims["proxy"] }
    assert_match(/skipped: .*proxy=varnish.*proxy varnish needs fake-proxy, which is not installed/, out.string)
    assert_empty proxy_launcher.launches
  end

  it "has no proxy dimension, launch nor document without the key" do
    _, records = run_trials(experiment(nil))
    refute records.first.dims.key?("proxy")
    assert_nil records.first.proxy
    assert_empty proxy_launcher.launches
  end
end
