# frozen_string_literal: true

require "test_helper"
require "json"
require "net/http"
require "open3"
require_relative "../../apps/rails-posts/posts_db"
require_relative "../support/builtin_app_server"

# The proxy topologies (`proxy:`, doc/topologies.md) with real nginx and
# varnish. One run of the runner (shared) puts rack-hello behind nginx and
# varnish and rails-posts direct and behind nginx-cache; the proxy's own
# guarantees (the stop path, a killed runner, failures to start) run in
# front of a tiny fixture server; the per-user cache proof logs two users
# in through nginx-cache beside the engine's session mix. Trials are
# short: these check what the proxy does and leaves behind, never speed.
# The fixtures of the tests below, kept out of the top level (the
# integration lanes load several files into one process).
module ProxyTestFixtures
  TINY_SERVER = File.expand_path("../fixtures/tiny_server.rb", __dir__)
  App = Struct.new(:health, :load_path, :expect_status, :expect_content_type, :expect_body, keyword_init: true)

  # A runner of its own (a child ruby) starts the proxy through the guard,
  # as a trial does, prints the proxy's processes and waits to be killed.
  RUNNER_SCRIPT = <<~'RUBY'
    require "rackbench"
    name, dir, upstream_port = ARGV
    server = Struct.new(:port).new(Integer(upstream_port))
    app = Struct.new(:health, :load_path, :expect_status, :expect_content_type, :expect_body, keyword_init: true)
                .new(health: "/", load_path: "/", expect_status: 200)
    running = Rackbench::Proxy::Launch.new(
      topology: Rackbench::Proxy.fetch(name), server: server, app: app, trial_dir: dir,
      layout: Rackbench::Runner::CpuLayout.detect, guard: [Rackbench::Trial::Kind::GUARD, Process.pid.to_s],
      marker_env: Rackbench::Watchdog.marker_env(dir), connections: 4, ready_timeout_s: 30, stop_grace_s: 5
    ).start
    puts Rackbench::ProcessTree.pids(running.process.pid, pgid: running.process.pgid).join(" ")
    $stdout.flush
    sleep
  RUBY
end

describe "proxies (integration)" do

  let(:dir) { Dir.mktmpdir("rackbench-proxy") }
  let(:layout) { Rackbench::Runner::CpuLayout.detect }
  let(:tiny_app) do
    ProxyTestFixtures::App.new(health: "/", load_path: "/", expect_status: 200, expect_content_type: "text/plain",
                   expect_body: "Hello, World!")
  end

  after { FileUtils.rm_rf(dir) }

  # The fixture server as a trial's booted server, stopped after the block.
  def with_tiny_server
    port = Rackbench::Ports.free_port
    server = Rackbench::ServerProcess.new(argv: [RbConfig.ruby, ProxyTestFixtures::TINY_SERVER, port.to_s, "ok"], port: port,
                                          log_path: File.join(dir, "tiny.log"))
    server.start
    server.wait_ready(health_path: "/", timeout_s: 30)
    yield server
  ensure
    server&.stop
  end

  def launch(topology, server, **options)
    Rackbench::Proxy::Launch.new(topology: topology, server: server, app: tiny_app, trial_dir: File.join(dir, "trial"),
                                 layout: layout, guard: [], marker_env: Rackbench::Watchdog.marker_env(dir),
                                 connections: 4, ready_timeout_s: 30, stop_grace_s: 5, **options)
  end

  # Processes that carry this test's marker or name its directory (nginx's
  # master names its configuration; its workers keep the marker: the
  # generated `env` line).
  def proxy_processes
    Dir.glob("/proc/[0-9]*").filter_map do |proc_dir|
      environ = File.binread(File.join(proc_dir, "environ"))
      cmdline = File.binread(File.join(proc_dir, "cmdline")).tr("\0", " ")
      next unless environ.include?("#{Rackbench::Watchdog::MARKER}=#{File.expand_path(dir)}") || cmdline.include?(dir)
      next if File.read(File.join(proc_dir, "stat"))[/\) (\S)/, 1] == "Z"

      "#{File.basename(proc_dir)} #{cmdline}"
    rescue SystemCallError
      nil
    end
  end

  def assert_nothing_left
    wait_until(timeout_s: 15, message: "no proxy process left") { proxy_processes.empty? }
  rescue Minitest::Assertion
    flunk "processes left: #{proxy_processes.join("; ")}"
  end

  # The same proxy started and stopped again, by pid: every process of
  # its tree is gone after the stop.
  it "stops every process of the proxy's tree" do
    with_tiny_server do |server|
      running = launch(Rackbench::Proxy.fetch("nginx"), server).start
      begin
        pids = running.process.processes
        assert_operator pids.size, :>=, 2
        assert_equal "Hello, World!\n", Net::HTTP.get(URI("http://127.0.0.1:#{running.port}/"))
      ensure
        running.stop_process # also when an assertion failed: no proxy outlives its test
      end
      refute running.alive?
      assert_empty alive_pids(pids)
    end
  end

  it "fails with the reason and leaves nothing running when the proxy cannot start" do
    with_tiny_server do |server|
      missing = Rackbench::Proxy::Nginx.new(binary: File.join(dir, "no-nginx"))
      error = assert_raises(Rackbench::SetupError) { launch(missing, server).start }
      assert_match(/\Aproxy nginx needs nginx, which is not installed/, error.message)

      taken = TCPServer.new("127.0.0.1", 0)
      begin
        error = assert_raises(Rackbench::SetupError) { launch(Rackbench::Proxy.fetch("nginx"), server, port: taken.addr[1]).start }
        assert_match(/proxy nginx: port #{taken.addr[1]} is already in use/, error.message)
      ensure
        taken.close
      end

      # nginx itself refuses its configuration and exits before it is ready.
      broken = Class.new(Rackbench::Proxy::Nginx) do
        def prepare(**options)
          super.tap { File.write(File.join(options[:dir], "nginx.conf"), "no_such_directive on;\n", mode: "a") }
        end
      end.new
      error = assert_raises(Rackbench::SetupError) { launch(broken, server).start }
      assert_match(/proxy nginx: server exited with status 1 before it was ready/, error.message)
      assert_match(/no_such_directive/, error.message)
      assert_nothing_left
    end
  end

  def alive_pids(pids)
    pids.select do |pid|
      File.read("/proc/#{pid}/stat")[/\) (\S)/, 1] != "Z"
    rescue SystemCallError
      false
    end
  end

  it "leaves nothing of a proxy whose runner was killed mid-trial (kill -9), before and after the next run's sweep" do
    with_tiny_server do |server|
      # nginx is the hard case: its process title wipes its environment,
      # marker included, so that no sweep can find it (doc/topologies.md).
      %w[nginx].each do |name|
        trial_dir = File.join(dir, name)
        runner = IO.popen([RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", ProxyTestFixtures::RUNNER_SCRIPT,
                           name, trial_dir, server.port.to_s], err: File::NULL)
        pids = runner.gets.to_s.split.map(&:to_i)
        assert pids.size >= 2, "#{name}: its processes (#{pids.inspect})"
        Process.kill("KILL", runner.pid)
        runner.close
        # The guard armed the parent-death signal: the proxy stops itself
        # (nginx's master ends its workers), as the server does.
        wait_until(timeout_s: 15, message: "#{name}'s processes #{pids.inspect} gone") { alive_pids(pids).empty? }
        # And what the next run's sweep would find is nothing.
        counts = Rackbench::Watchdog.sweep(results_dir: trial_dir, grace_s: 5)
        assert_equal 0, counts[:survivors]
      end
    end
  end
end

# One run of the runner, as a user runs it, shared by the tests below:
# rack-hello behind nginx and varnish (the plumbing of full trials), and
# rails-posts' anonymous /posts direct and behind nginx-cache (the cache).
module ProxyRun
  extend Rackbench::TestHelpers, Rackbench::Test::Cli

  DIR = Dir.mktmpdir("rackbench-proxy-run")
  Minitest.after_run { FileUtils.rm_rf(DIR) }
  RESULTS = File.join(DIR, "results")

  module_function

  # [trials by "app/proxy", the run's output]
  def run
    @run ||= begin
      file = File.join(DIR, "proxy.yml")
      File.write(file, <<~YAML)
        name: proxy-topologies
        batches: 1
        servers: [puma]
        apps: [rack-hello, rails-posts]
        threads: 2
        proxy: [none, nginx, nginx-cache, varnish]
        load: { connections: 4, duration: 1s, warmup: 0.5s, timeout: 10s }
        exclude:
          - { app: rack-hello, proxy: [none, nginx-cache] }
          - { app: rails-posts, proxy: [nginx, varnish] }
      YAML
      # --wide: the report's table whole (its proxy columns are matched side by side).
      out, err, status = rackbench("run", file, "--results", RESULTS, "--wide")
      raise "rackbench run failed:\n#{out}\n#{err}" unless status.success?

      trials = Rackbench::Store.open(RESULTS, &:trials).to_h { |t| ["#{t.app}/#{t.dims["proxy"]}", t] }
      [trials, out]
    end
  end
end

describe "proxied trials through the runner (integration)" do
  before { require_engine! }

  let(:trials) { ProxyRun.run.first }
  let(:out) { ProxyRun.run.last }

  it "runs rack-hello behind nginx and varnish: the load through the proxy, its figures, nothing left running" do
    assert_match(/server on CPU [0-9,]+ \(with the proxy\)/, out) if Rackbench::Runner::CpuLayout.detect.pinned?
    %w[nginx varnish].each do |name|
      trial = trials.fetch("rack-hello/#{name}")
      assert trial.ok?, "#{name}: #{trial.reason}"
      assert_equal name, trial.proxy["name"]
      assert_match(/\A\d+\.\d+/, trial.proxy["version"], "#{name}'s version")
      assert_operator trial.proxy["sample"]["processes_peak"], :>=, 2, "#{name}: its tree sampled (master and worker)"
      assert_equal trial.proxy["port"], URI(trial.load_settings["url"]).port, "#{name}: the load went to the proxy"
      work = File.join(ProxyRun::RESULTS, "work", File.basename(trial.log_path, ".log"), "proxy")
      assert_match(/127\.0\.0\.1/, File.read(Dir.glob(File.join(work, "*.{conf,vcl}")).first))
    end
    assert_nil trials.fetch("rack-hello/nginx").proxy["cache"], "nginx without a cache counts nothing"
    varnish = trials.fetch("rack-hello/varnish").proxy["cache"]
    assert_operator Rackbench::Proxy::CacheCounts.hit_ratio(varnish), :>, 0.9, "varnish's own counters: #{varnish}"
    leftovers = Dir.glob("/proc/[0-9]*").select do |proc_dir|
      File.binread(File.join(proc_dir, "cmdline")).include?(ProxyRun::RESULTS) ||
        File.binread(File.join(proc_dir, "environ")).include?("#{Rackbench::Watchdog::MARKER}=#{ProxyRun::RESULTS}")
    rescue SystemCallError
      false
    end
    assert_empty leftovers, "every process of the run stopped"
  end

  # The cache answers nearly everything: its hit ratio is the proof; the
  # direction of the throughput is asserted, never its size.
  it "serves rails-posts' anonymous pages from nginx-cache (hit ratio above 90%), reported beside the direct run" do
    direct = trials.fetch("rails-posts/none")
    cached = trials.fetch("rails-posts/nginx-cache")
    assert direct.ok? && cached.ok?, [direct.reason, cached.reason].inspect
    assert_nil direct.proxy
    cache = cached.proxy["cache"]
    assert_operator Rackbench::Proxy::CacheCounts.hit_ratio(cache), :>, 0.9, "hit ratio over the window: #{cache}"
    assert_operator cached.rate, :>, direct.rate, "the cache answers what the app would render"
    assert_operator cached.proxy["sample"]["cpu_user_s"] + cached.proxy["sample"]["cpu_system_s"], :>, 0
    # The terminal report shows the proxied figures.
    assert_match(/\| hits +\| proxy CPU \| proxy mem \| req\/day/, out)
    assert_match(/nginx-cache .*\| +\d+\.\d% \|/, out)
  end
end

# nginx-cache in front of rails-posts: the cache's proofs.
describe "nginx-cache in front of rails-posts (integration)" do
  include BuiltinAppServer

  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-proxy-rails") }
  after { FileUtils.rm_rf(dir) }

  # Two users logged in through the proxy, their pages fetched through it
  # while the engine's session mix (every connection logged in as
  # author7) runs through it too: each page names its own user (the app
  # check on every sampled response), and some of each user's pages came
  # from the cache, so the key really separated them.
  it "never serves a logged-in page from another user's cache entry" do
    app = Rackbench::Apps.builtin("mix")
    # No app check before the proxy starts: every page the test asks for goes through the proxy.
    with_builtin_app("mix", dir: dir, check: false) do |server, work|
      running = nil
      begin
        running = Rackbench::Proxy::Launch.new(
          topology: Rackbench::Proxy.fetch("nginx-cache"), server: server, app: app, trial_dir: work,
          layout: Rackbench::Runner::CpuLayout.detect, guard: [], marker_env: Rackbench::Watchdog.marker_env(dir),
          connections: 2, ready_timeout_s: 30, stop_grace_s: 5
        ).start
        http = Net::HTTP.new("127.0.0.1", running.port, nil)
        users = %w[author3 author9].to_h { |name| [name, log_in(http, name)] }
        refute_equal users["author3"], users["author9"]

        settings = Rackbench::LoadSettings.build(url: "http://127.0.0.1:#{running.port}/posts", connections: 2,
                                                 duration_s: 1.5, warmup_s: 0.3, requests_file: app.requests,
                                                 cookies: true, timeout_s: 10)
        engine = Thread.new { Rackbench::LoadEngine.new.run(settings) }
        seen = Hash.new { |h, k| h[k] = Hash.new(0) }
        # Sampling beside the engine until it ends (at least a few rounds).
        rounds = 0
        while engine.alive? || rounds < 5
          rounds += 1
          users.each do |name, cookie|
            response = http.get("/posts", "Cookie" => cookie, "Accept" => "text/html")
            Rackbench::ServerProcess::AppCheck.verify!("/posts", response.code.to_i, response["content-type"], response.body,
                                                       expect_status: 200, expect_content_type: "text/html",
                                                       expect_body: "Signed in as #{name}")
            other = (users.keys - [name]).first
            refute_includes response.body, "Signed in as #{other}"
            refute_includes response.body, "Signed in as author7", "#{name} got a page of the engine's sessions"
            seen[name][response["x-cache-status"]] += 1
          end
        end
        result = engine.value
        assert_operator result.requests, :>, 0
        assert_equal 0, result.error_count, result.status.inspect
        users.each_key do |name|
          assert_operator seen[name]["HIT"], :>, 0, "#{name}'s pages came from the cache too: #{seen[name]}"
        end
        anonymous = http.get("/posts", "Accept" => "text/html")
        assert_includes anonymous.body, "Not signed in"
      ensure
        running&.stop_process
      end
    end
  end

  # Logs name in through the proxy as a browser does (the form's token,
  # then the form) and returns the session cookie ("name=value").
  def log_in(http, name)
    form = http.get("/login", "Accept" => "text/html")
    cookie = form["set-cookie"].split(";").first
    token = form.body[/name="authenticity_token" value="([^"]+)"/, 1]
    body = URI.encode_www_form(authenticity_token: token, user: name, password: PostsDb::PASSWORD)
    response = http.post("/login", body, "Cookie" => cookie, "Content-Type" => "application/x-www-form-urlencoded",
                                         "Accept" => "text/html")
    assert_equal "303", response.code, response.body
    response["set-cookie"].split(";").first
  end
end
