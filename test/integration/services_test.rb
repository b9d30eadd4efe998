# frozen_string_literal: true

require "test_helper"
require "open3"
require "socket"
require "stringio"

# The services with Debian's PostgreSQL, Redis and memcached: started as a
# run starts them (under their own accounts when the tests run as root,
# pinned, marked), written to the way an app writes, put back to their
# template, sampled and stopped with nothing left; a port in use and a
# service that cannot start are one line before any trial; and a runner
# killed with kill -9 mid-trial leaves no PostgreSQL or Redis process.
ServicesTestApp = Struct.new(:name, :services)

describe "services (integration)" do
  let(:dir) { Dir.mktmpdir("rackbench-services") }
  let(:layout) { Rackbench::Runner::CpuLayout.detect }
  let(:out) { StringIO.new }
  let(:context) do
    Rackbench::Trial::Context.new(source: nil, variants: {}, layout: layout, results_dir: dir, out: out,
                                  ready_timeout_s: 60, stop_grace_s: 10, parent_env: ENV)
  end

  after { FileUtils.rm_rf(dir) }

  def spec(name, **options)
    Rackbench::Services::Spec.new(name: name, env: nil, port: nil, settings: {}, **options)
  end

  def psql(url, sql)
    out, err, status = Open3.capture3("psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", url, "-c", sql)
    assert status.success?, err
    out.strip
  end

  def memcached(endpoint, line)
    socket = TCPSocket.new("127.0.0.1", endpoint.port)
    socket.write(line)
    socket.readpartial(4096)
  ensure
    socket&.close
  end

  # The live processes of a process tree (by /proc), pids only.
  def tree(pid)
    Rackbench::ProcessTree.pids(pid, pgid: pid)
  end

  def owner(pid)
    File.read("/proc/#{pid}/status")[/^Uid:\s+(\d+)/, 1].to_i
  end

  it "starts the three, restores each from its template before every trial, samples and stops them, leaving nothing" do
    started = Rackbench::Services::Started.start([ServicesTestApp.new("shop", [spec("postgresql"), spec("redis"), spec("memcached")])],
                                                 context: context)
    group = started.for("shop")
    pg, redis, cache = group.services
    pids = group.services.flat_map { |service| tree(service.process.pid) }
    begin
      assert_match(/service postgresql of shop: PostgreSQL \d+\.\d+ on unix socket .* as DATABASE_URL/, out.string)
      url = group.env.fetch("DATABASE_URL")
      # What an app's setup writes: the template.
      psql(url, "CREATE TABLE items (id int); INSERT INTO items SELECT generate_series(1, 20)")
      Rackbench::Services::Resp.call(redis.endpoint, "SET", "greeting", "hello")
      memcached(cache.endpoint, "set page 0 0 2\r\nok\r\n")
      group.prepare_trial!
      assert_equal({ "tables" => 1, "rows" => 20 }, pg.to_h["state"])
      assert_equal({ "keys" => 1 }, redis.to_h["state"])

      # What a trial writes, then the next trial's restore.
      psql(url, "INSERT INTO items VALUES (21); CREATE TABLE junk (x int)")
      Rackbench::Services::Resp.call(redis.endpoint, "SET", "other", "x")
      group.start
      psql(url, "SELECT count(*) FROM items CROSS JOIN generate_series(1, 20000)") # some work in the window
      group.stop
      assert pg.to_h["sample"]["samples"].positive?, "PostgreSQL's tree sampled over the window"
      assert_operator pg.to_h["sample"]["processes_peak"], :>=, 2, "the postmaster and its helpers"
      group.prepare_trial!
      assert_equal "20", psql(url, "SELECT count(*) FROM items"), "the row the trial added is gone"
      assert_equal "", psql(url, "SELECT to_regclass('junk')"), "and so is the table"
      assert_equal "hello", Rackbench::Services::Resp.call(redis.endpoint, "GET", "greeting")
      assert_nil Rackbench::Services::Resp.call(redis.endpoint, "GET", "other")
      assert_equal "END\r\n", memcached(cache.endpoint, "get page\r\n"), "memcached flushed"
      assert_operator pg.to_h["restore_s"], :>, 0

      group.services.each do |service|
        pid = service.process.pid
        assert_equal Etc.getpwnam(service.account).uid, owner(pid), "#{service.kind.name} as #{service.account}" if Process.euid.zero?
        environ = File.binread("/proc/#{pid}/environ")
        assert_includes environ, "#{Rackbench::Watchdog::MARKER}=#{File.expand_path(dir)}", "marked for the watchdog"
        if layout.pinned?
          assert_equal layout.server_cpus.join(","), File.read("/proc/#{pid}/status")[/^Cpus_allowed_list:\s+(\S+)/, 1]
        end
      end
    ensure
      workspace = File.dirname(pg.dir)
      started.stop
    end
    assert_empty pids.select { |pid| alive?(pid) }, "every service process gone"
    refute Dir.exist?(workspace), "the services' directory removed"
  end

  it "says in one line, before any trial, that a service's port is in use, and stores nothing" do
    taken = TCPServer.new("127.0.0.1", 0)
    port = taken.addr[1]
    file = File.join(dir, "exp.yml")
    File.write(file, <<~YAML)
      name: port-taken
      servers: [puma]
      apps: [{ name: rack-hello, services: [{ name: memcached, port: #{port} }] }]
      load: { duration: 1s, warmup: 0s, timeout: 2s }
    YAML
    results = File.join(dir, "results")
    _out, err, status = rackbench("run", file, "--results", results)
    refute status.success?
    assert_equal ["rackbench: service memcached of app rack-hello: port #{port} is already in use on 127.0.0.1"],
                 err.lines.map(&:strip).grep(/\Arackbench: (?!warning)/)
    refute File.exist?(File.join(results, "results.db")), "nothing stored"
  ensure
    taken&.close
  end

  it "says in one line why PostgreSQL would not start, naming its log, and leaves nothing" do
    bad = spec("postgresql", settings: { "shared_buffers" => "lots" })
    error = assert_raises(Rackbench::SetupError) { Rackbench::Services::Started.start([ServicesTestApp.new("shop", [bad])], context: context) }
    log = File.join(dir, "logs", "service-shop-postgresql.log")
    assert_match(/\Aservice postgresql of app shop: postgres exited with status 1 before it was ready: .*invalid value for parameter "shared_buffers": "lots".* \(log: #{Regexp.escape(log)}\)\z/,
                 error.message)
    assert_equal 1, error.message.lines.size
    assert_empty Dir.glob(File.join(Dir.tmpdir, "rackbench-services-*")).select { |d| File.exist?(File.join(d, "1-shop-postgresql")) }
  end

  it "leaves no PostgreSQL or Redis process when the runner is killed (kill -9) mid-trial" do
    file = File.join(dir, "exp.yml")
    File.write(file, <<~YAML)
      name: killed
      servers: [puma]
      apps: [{ name: rack-hello, services: [postgresql, redis] }]
      load: { duration: 60s, warmup: 1s, connections: 2, timeout: 2s }
    YAML
    results = File.join(dir, "results")
    marker = "#{Rackbench::Watchdog::MARKER}=#{File.expand_path(results)}"
    runner = spawn_rackbench("run", file, "--results", results, err: File.join(dir, "runner.err"), pgroup: false)
    marked = lambda do
      Dir.glob("/proc/[0-9]*").filter_map do |proc_dir|
        File.binread(File.join(proc_dir, "environ")).split("\0").include?(marker) ? File.basename(proc_dir).to_i : nil
      rescue SystemCallError
        nil
      end.select { |pid| alive?(pid) }
    end
    command = ->(pid) { File.binread("/proc/#{pid}/cmdline").tr("\0", " ") rescue "" } # rubocop:disable Style/RescueModifier
    # The trial is under way: PostgreSQL, Redis and the server all run.
    services = wait_until(timeout_s: 300, interval_s: 0.2, message: "the services and the server") do
      pids = marked.call
      commands = pids.map { |pid| command.call(pid) }
      pids if commands.any?(/postgres -D/) && commands.any?(/redis-server/) && commands.any?(/puma/)
    end
    service_pids = services.select { |pid| command.call(pid).match?(/postgres|redis-server/) }
    service_pids += service_pids.flat_map { |pid| tree(pid) }
    workspace = Dir.glob(File.join(Dir.tmpdir, "rackbench-services-*")).find do |d|
      File.exist?(File.join(d, "1-rack-hello-postgresql"))
    end
    Process.kill(:KILL, runner)
    Process.wait(runner)
    runner = nil
    wait_until(timeout_s: 60, interval_s: 0.2, message: "no PostgreSQL or Redis process left") do
      service_pids.none? { |pid| alive?(pid) } && marked.call.empty?
    end
    # The next run removes what the killed one left on disk. Another run's
    # sweep (a services test in the other lane) may hold the dead run's
    # lock while it removes the directory: then this sweep passes it over
    # and the directory goes a moment later, so wait for it.
    refute_nil workspace, "the killed run's services directory"
    wait_until(timeout_s: 30, interval_s: 0.2, message: "the killed run's services directory removed by a sweep") do
      Rackbench::Services::Workspace.sweep
      !Dir.exist?(workspace)
    end
  ensure
    if runner
      Process.kill(:KILL, runner)
      Process.wait(runner)
    end
    Rackbench::Watchdog.sweep(results_dir: File.join(dir, "results"), grace_s: 1)
  end
end
