# frozen_string_literal: true

require "test_helper"
require "rbconfig"
require "socket"
require "rackbench/process/ports"
require "rackbench/observe/process_tree"
require "rackbench/process/server_process"

describe Rackbench::ServerProcess do
  before do
    @dir = Dir.mktmpdir("rackbench-server-process")
    @servers = []
  end

  after do
    # A failed test must still leave nothing running.
    @servers.each do |server|
      server.stop(grace_s: 0.2)
    rescue Rackbench::SetupError
      nil
    end
    FileUtils.remove_entry(@dir)
  end

  def tiny(*args, port: Rackbench::Ports.free_port)
    script = File.expand_path("../fixtures/servers/tiny_server.rb", __dir__)
    server = Rackbench::ServerProcess.new(
      argv: [RbConfig.ruby, "--disable-gems", script, "--port", port.to_s, *args.map(&:to_s)],
      env: { "TINY" => "1" }, chdir: @dir, log_path: File.join(@dir, "logs", "server.log"), port: port
    )
    @servers << server
    server
  end

  # Live processes whose command line names this server's port.
  def processes_of(server)
    marker = "--port\0#{server.port}\0"
    Rackbench::ProcessTree.scan.values.reject(&:zombie?).select do |entry|
      File.read("/proc/#{entry.pid}/cmdline").include?(marker)
    rescue Errno::ENOENT, Errno::ESRCH
      false
    end
  end

  it "boots, answers, and stops leaving the port free" do
    server = tiny.start
    ready_s = server.wait_ready(health_path: "/health", timeout_s: 10)
    assert_operator ready_s, :>, 0
    assert server.alive?
    assert_equal server.pid, server.pgid
    assert_equal [200, "Hello, world!"], server.check_app(path: "/", expect_status: 200, expect_body: "Hello")
    assert server.check_app(path: "/", expect_body: /world/)

    result = server.stop
    refute result[:killed]
    assert result[:exit_status]
    refute server.alive?
    refute Rackbench::Ports.in_use?(server.port)
    assert_match(/listening on #{server.port}/o, server.log_tail)
    assert_match(/\[rackbench\] stopped in \d+\.\d\ds: server was killed by signal 15 \(SIGTERM\)\n\z/, server.log_tail)
  end

  it "refuses a port that is already in use" do
    listener = TCPServer.new("127.0.0.1", 0)
    server = tiny(port: listener.addr[1])
    error = assert_raises(Rackbench::SetupError) { server.start }
    assert_match(/port #{listener.addr[1]} is already in use/, error.message)
    assert_nil server.pid
  ensure
    listener&.close
  end

  it "reports a command that does not exist" do
    port = Rackbench::Ports.free_port
    server = Rackbench::ServerProcess.new(argv: [File.join(@dir, "no-such-server")], port: port,
                                          log_path: File.join(@dir, "x.log"))
    error = assert_raises(Rackbench::SetupError) { server.start }
    assert_match(/cannot start .*no-such-server/, error.message)
  end

  it "never hands a one-word command to a shell" do
    port = Rackbench::Ports.free_port
    server = Rackbench::ServerProcess.new(argv: ["echo hi; true"], port: port, log_path: File.join(@dir, "x.log"))
    assert_raises(Rackbench::SetupError) { server.start }
  end

  it "fails early with the exit status and log tail when the server exits" do
    server = tiny("--exit", 3).start
    error = assert_raises(Rackbench::SetupError) { server.wait_ready(timeout_s: 10) }
    assert_match(/exited with status 3 before it was ready/, error.message)
    assert_match(/boom/, error.message)
  end

  it "takes no other program's answer on its port for its server's" do
    # Another program binds the port once the server has started (start
    # refuses a port already taken), while its boot has not listened yet.
    server = tiny("--never-listen").start
    squatter = TCPServer.new("127.0.0.1", server.port)
    answers = Thread.new do
      loop do
        client = squatter.accept
        client.readpartial(4096)
        client.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        client.close
      rescue IOError, SystemCallError
        break
      end
    end
    # Never ready whatever the machine's speed: the timeout only bounds the test.
    error = assert_raises(Rackbench::SetupError) { server.wait_ready(timeout_s: 1) }
    assert_match(/not ready after .*HTTP 200 from a process that is not the server's/, error.message)
    # The other side: the server's own listener is taken as its own.
    squatter.close
    answers.join
    own = tiny.start
    assert_kind_of Float, own.wait_ready(timeout_s: 60 * busy_factor)
  ensure
    squatter&.close unless squatter&.closed?
  end

  it "names the error of a server that failed to boot, not the last line of its backtrace" do
    server = tiny("--raise", "database 'development' is not configured").start
    error = assert_raises(Rackbench::SetupError) { server.wait_ready(timeout_s: 30) }
    first_line = error.message.lines.first.chomp
    assert_equal "server exited with status 1 before it was ready: database 'development' is not configured " \
                 "(ArgumentError)", first_line
    assert_match(/from .*tiny_server\.rb/, error.message, "the log's tail follows on the next lines")
  end

  it "names the signal that killed a server" do
    server = tiny.start
    server.wait_ready(timeout_s: 30)
    Process.kill(:KILL, server.pid)
    wait_until(timeout_s: 30, message: "the server to die") { !server.alive? }
    assert_match(/\Aserver was killed by signal 9 \(SIGKILL\) during the measurement/,
                 server.failure("during the measurement"))
  ensure
    server&.stop
  end

  it "times out with the last probe and the log tail" do
    server = tiny("--status", 503).start
    # Listening first, so that the short deadline below is about the 503,
    # not about how fast a busy machine starts a ruby.
    wait_until(timeout_s: 30, message: "the tiny server to listen") { server.log_tail.include?("listening on") }
    error = assert_raises(Rackbench::SetupError) { server.wait_ready(timeout_s: 0.15) }
    assert_match(/server not ready after 0.15s \(last probe: HTTP 503, 1 of 1 processes\)/, error.message)
    assert_match(/listening on/, error.message)
  end

  it "waits for every expected process" do
    server = tiny("--children", 2, "--children-after", 0.1).start
    server.wait_ready(timeout_s: 10, expected_processes: 3)
    assert_equal 3, server.processes.size
  end

  it "waits for the workers' ready lines" do
    server = tiny("--children", 2, "--children-after", 0.1, "--ready-line", "worker ready").start
    server.wait_ready(timeout_s: 10, expected_processes: 3, ready_log: [/worker ready/, 2])
    assert_equal 3, server.processes.size
    assert_equal 2, server.log_tail.scan("worker ready").size
  end

  it "does not count ready lines a previous server wrote to the same log" do
    File.write(File.join(@dir, "logs", "server.log").tap { |p| FileUtils.mkdir_p(File.dirname(p)) }, "worker ready\n")
    server = tiny.start
    error = assert_raises(Rackbench::SetupError) { server.wait_ready(timeout_s: 0.15, ready_log: [/worker ready/, 1]) }
    assert_match(/0 of 1 workers booted/, error.message)
  end

  it "names a wrong status or body in the app check" do
    server = tiny("--status", 500, "--body", "Internal Server Error").start
    wait_until(message: "server listening") { Rackbench::Ports.in_use?(server.port) }
    error = assert_raises(Rackbench::SetupError) do
      server.check_app(path: "/hello", expect_status: 200, expect_body: "Hello")
    end
    assert_match(%r{GET /hello returned status 500, expected 200 and body lacks "Hello"}, error.message)
    assert_match(/body: "Internal Server Error"/, error.message)
  end

  it "checks the content type as a case-insensitive prefix" do
    server = tiny.start
    wait_until(message: "server listening") { Rackbench::Ports.in_use?(server.port) }
    assert_equal 200, server.check_app(path: "/", expect_content_type: "text/plain").first
    assert_equal 200, server.check_app(path: "/", expect_content_type: "TEXT/Plain").first
    error = assert_raises(Rackbench::SetupError) do
      server.check_app(path: "/", expect_content_type: "text/html", expect_body: "Hello")
    end
    assert_match(%r{GET / returned content type "text/plain", expected "text/html"; body: "Hello, world!"}, error.message)
  end

  it "reports an app check against a server that is not there" do
    server = tiny.start
    server.stop
    error = assert_raises(Rackbench::SetupError) { server.check_app(path: "/") }
    assert_match(/app check failed: GET \/: Errno::ECONNREFUSED/, error.message)
  end

  it "kills a server that ignores TERM, with its children, after the grace period" do
    server = tiny("--ignore-term", "--children", 2).start
    server.wait_ready(timeout_s: 10, expected_processes: 3)
    pids = server.processes
    assert_equal 3, pids.size

    result = server.stop(grace_s: 0.15)
    assert result[:killed]
    assert result[:exit_status].signaled?
    assert_equal "KILL", Signal.signame(result[:exit_status].termsig)
    assert_match(/server was killed by signal 9 \(SIGKILL\), KILLed after a 0.15s grace period/, server.log_tail)
    pids.each { |pid| refute alive?(pid), "process #{pid} survived stop" }
    refute Rackbench::Ports.in_use?(server.port)
  end

  it "stops children forked into the group and a child that left it" do
    server = tiny("--children", 2, "--escaped-child").start
    server.wait_ready(timeout_s: 10, expected_processes: 4)
    pids = server.processes
    wait_until(message: "a child in a group of its own") do
      pids.any? { |pid| Rackbench::ProcessTree.read(pid).pgrp != server.pgid }
    end

    result = server.stop(grace_s: 5)
    refute result[:killed], "TERM alone should have stopped every process"
    pids.each { |pid| refute alive?(pid), "process #{pid} survived stop" }
  end

  it "kills an escaped child that ignores TERM even after its parent died" do
    server = tiny("--ignore-term", "--escaped-child").start
    server.wait_ready(timeout_s: 10, expected_processes: 2)
    pids = server.processes

    assert server.stop(grace_s: 0.15)[:killed]
    pids.each { |pid| refute alive?(pid), "process #{pid} survived stop" }
  end

  it "kills what the server forks while it stops" do
    server = tiny("--spawn-on-term").start
    server.wait_ready(timeout_s: 10)

    assert server.stop(grace_s: 0.3)[:killed]
    assert_empty processes_of(server), "a child forked during stop survived"
  end

  it "is idempotent and safe before start" do
    server = tiny
    assert_equal({ stop_s: 0.0, killed: false, exit_status: nil }, server.stop)

    server = tiny.start
    server.wait_ready(timeout_s: 10)
    first = server.stop
    assert_same first, server.stop
  end

  it "stops a server that already exited and reaps it" do
    server = tiny("--exit", 0).start
    wait_until(message: "server exit") { !server.alive? }
    result = server.stop
    assert result[:exit_status].success?
  end
end

describe Rackbench::Ports do
  it "finds a free port, sees a listener on it, and sees it freed" do
    port = Rackbench::Ports.free_port
    refute Rackbench::Ports.in_use?(port)
    listener = TCPServer.new("127.0.0.1", port)
    assert Rackbench::Ports.in_use?(port)
    refute Rackbench::Ports.wait_free(port, timeout_s: 0.05)
    listener.close
    assert Rackbench::Ports.wait_free(port, timeout_s: 1)
  ensure
    listener&.close unless listener&.closed?
  end

  it "counts only listening sockets in the kernel's tables, not TIME_WAIT" do
    Dir.mktmpdir("rackbench-fake-proc") do |proc_dir|
      FileUtils.mkdir_p(File.join(proc_dir, "net"))
      File.write(File.join(proc_dir, "net", "tcp"), <<~TABLE)
        sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
         0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
         1: 0100007F:1F91 0100007F:C350 06 00000000:00000000 03:00000F9E 00000000     0        0 0 3
      TABLE
      assert Rackbench::Ports.in_use?(8080, proc_dir: proc_dir)
      refute Rackbench::Ports.in_use?(8081, proc_dir: proc_dir)
    end
  end

  it "falls back to binding where there is no /proc" do
    Dir.mktmpdir("rackbench-no-proc") do |proc_dir|
      listener = TCPServer.new("127.0.0.1", 0)
      port = listener.addr[1]
      assert Rackbench::Ports.in_use?(port, proc_dir: proc_dir)
      listener.close
      refute Rackbench::Ports.in_use?(port, proc_dir: proc_dir)
    end
  end
end
