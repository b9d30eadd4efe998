# frozen_string_literal: true

require "test_helper"
require "json"
require "net/http"
require "open3"
require_relative "../../apps/rails-posts/posts_db"

# The proxy topologies (`proxy:`, doc/topologies.md) with real nginx and
# varnish. The plumbing (launch, readiness, the stop path, the sweep of an
# abandoned proxy, failures) runs in front of a tiny fixture server; the
# cache's proofs run rails-posts through the runner and through a proxy
# with two logged-in users. Trials are short: these check what the proxy
# does and what it leaves behind, never how fast it is.
describe "proxies (integration)" do
  TINY_SERVER = File.expand_path("../fixtures/tiny_server.rb", __dir__)
  FixtureApp = Struct.new(:health, :load_path, :expect_status, :expect_content_type, :expect_body, keyword_init: true)

  let(:dir) { Dir.mktmpdir("rackbench-proxy") }
  let(:layout) { Rackbench::Runner::CpuLayout.detect }
  let(:tiny_app) do
    FixtureApp.new(health: "/", load_path: "/", expect_status: 200, expect_content_type: "text/plain",
                   expect_body: "Hello, World!")
  end

  after { FileUtils.rm_rf(dir) }

  # The fixture server as a trial's booted server, stopped after the block.
  def with_tiny_server
    port = Rackbench::Ports.free_port
    server = Rackbench::ServerProcess.new(argv: [RbConfig.ruby, TINY_SERVER, port.to_s, "ok"], port: port,
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

  it "starts nginx and varnish in front of the server, counts varnish's cache and stops every process" do
    with_tiny_server do |server|
      %w[nginx varnish].each do |name|
        running = launch(Rackbench::Proxy.fetch(name), server).start
        begin
          refute_equal server.port, running.port
          assert_match(/\A\d+\.\d+/, running.version, "#{name}'s version")
          running.start
          3.times do
            response = Net::HTTP.get_response(URI("http://127.0.0.1:#{running.port}/"))
            assert_equal "Hello, World!\n", response.body
          end
          window = running.stop
          pids = running.process.processes
          assert window["sample"]["processes_peak"].to_i >= 2, "#{name}: its tree is sampled (master and worker)"
          if name == "varnish"
            assert_equal 3, window["cache"]["hits"] + window["cache"]["misses"], "varnish's counters over the window"
          else
            assert_nil window["cache"], "nginx without a cache counts nothing"
          end
          assert_match(/upstream app|backend app/, File.read(Dir.glob(File.join(dir, "trial/proxy/*.{conf,vcl}")).first))
        ensure
          running.stop_process
        end
        refute running.alive?
        assert_empty alive_pids(pids), "#{name}: every process of its tree stopped"
        assert_nothing_left
      end
    end
  end

  it "fails with the reason and leaves nothing running when the proxy cannot start" do
    with_tiny_server do |server|
      missing = Rackbench::Proxy::Nginx.new(binary: File.join(dir, "no-nginx"))
      error = assert_raises(Rackbench::SetupError) { launch(missing, server).start }
      assert_match(/proxy nginx needs nginx, which is not installed/, error.message)

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
        runner = IO.popen([RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", RUNNER_SCRIPT,
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

# nginx-cache in front of rails-posts: the cache's proofs.
describe "nginx-cache in front of rails-posts (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-proxy-rails") }
  after { FileUtils.rm_rf(dir) }

  # The runner, as a user runs it: anonymous /posts direct and behind
  # nginx-cache in one experiment. The cache answers nearly everything:
  # its hit ratio is the proof; the direction of the throughput is
  # asserted, never its size.
  it "serves anonymous pages from the cache (hit ratio above 90%) and reports it beside the direct run" do
    file = File.join(dir, "proxy.yml")
    File.write(file, <<~YAML)
      name: proxy-cache
      batches: 1
      servers: [puma]
      apps: [rails-posts]
      threads: 2
      proxy: [none, nginx-cache]
      load: { connections: 4, duration: 1s, warmup: 0.5s, timeout: 10s }
    YAML
    results = File.join(dir, "results")
    out, err, status = Open3.capture3(RbConfig.ruby, File.expand_path("../../exe/rackbench", __dir__), "run", file,
                                      "--results", results)
    assert status.success?, "#{out}\n#{err}"
    trials = Rackbench::Store.open(results) { |store| store.trials }
    direct = trials.find { |t| t.dims["proxy"] == "none" }
    cached = trials.find { |t| t.dims["proxy"] == "nginx-cache" }
    assert direct.ok? && cached.ok?, [direct.reason, cached.reason].inspect
    assert_nil direct.proxy
    cache = cached.proxy["cache"]
    ratio = Rackbench::Proxy::CacheCounts.hit_ratio(cache)
    assert_operator ratio, :>, 0.9, "hit ratio over the window: #{cache}"
    # The proxy's log is counted between the window's marks, which reach
    # the runner a moment after the engine's edges: close to the engine's
    # count, not equal to it.
    assert_operator cache["hits"] + cache["misses"], :>, 0
    assert_operator cached.rate, :>, direct.rate, "the cache answers what the app would render"
    assert_equal "nginx", cached.proxy["program"]
    assert_operator cached.proxy["sample"]["cpu_user_s"] + cached.proxy["sample"]["cpu_system_s"], :>, 0
    # The terminal report shows the proxied figures.
    assert_match(/\| hits +\| proxy CPU \| proxy mem \| req\/day/, out)
    assert_match(/nginx-cache .*\| +\d+\.\d% \|/, out)
  end

  # Two users logged in through the proxy, their pages fetched through it
  # while the engine's session mix (every connection logged in as
  # author7) runs through it too: each page names its own user (the app
  # check on every sampled response), and some of each user's pages came
  # from the cache, so the key really separated them.
  it "never serves a logged-in page from another user's cache entry" do
    app = Rackbench::Apps.builtin("mix")
    adapter = Rackbench::Servers.fetch("puma")
    variant = Rackbench::Rubies.resolve({ ruby: RbConfig.ruby }, installs: [])
    bundle = Rackbench::BundleEnv.new(app_dir: app.dir, install: variant.install, gemfile_extra: adapter.gem_lines("ruby"))
    bundle.ensure_installed!
    work = File.join(dir, "work").tap { |path| FileUtils.mkdir_p(path) }
    env = bundle.env.merge(adapter.env).merge("RACKBENCH_TRIAL_DIR" => work)
    setup = Rackbench::Rubies::Child.run(bundle.exec_prefix + [app.setup], env: ENV.to_h.merge(env).compact,
                                                                          timeout_s: 120, chdir: app.dir)
    assert setup.success?, setup.output
    port = Rackbench::Ports.free_port
    argv = bundle.exec_prefix + adapter.command(app_dir: app.dir, config_ru: File.join(app.dir, "config.ru"),
                                                port: port, processes: 1, threads: 2, work_dir: work)
    server = Rackbench::ServerProcess.new(argv: argv, env: env, chdir: app.dir, port: port,
                                          log_path: File.join(dir, "server.log"))
    running = nil
    begin
      server.start
      server.wait_ready(health_path: app.health, timeout_s: 60, ready_log: adapter.ready_log(1))
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
      server.stop
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
