# frozen_string_literal: true

require "test_helper"
require "json"
require "net/http"
require "open3"

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
