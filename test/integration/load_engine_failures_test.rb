# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "socket"
require_relative "../fixtures/fixture_server"

# Misbehaving servers: the engine keeps running, counts every failure under
# the right kind, never crashes and never runs past duration + timeout.
describe "load engine against misbehaving servers" do
  before { require_engine! }

  # Upper bound on a run: the measured window, the drain (at most one
  # timeout) and generous start-up slack for a loaded CI machine. This is a
  # hang detector, not a performance threshold.
  def assert_bounded(duration_s, timeout_s)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    result = yield
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    assert_operator elapsed, :<, duration_s + timeout_s + 3.0, "run took #{elapsed.round(2)}s"
    result
  end

  def run_load(url, duration_s: 0.6, timeout_s: 0.5, **options)
    settings = Rackbench::LoadSettings.build(url: url, connections: 2, duration_s: duration_s,
                                             timeout_s: timeout_s, **options)
    assert_bounded(duration_s, timeout_s) { Rackbench::LoadEngine.new.run(settings) }
  end

  def with_server(mode, **options, &block)
    Rackbench::Test::FixtureServer.open(mode: mode, **options, &block)
  end

  it "counts connect errors against a port nobody listens on" do
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] } # bound then closed: free
    result = run_load("http://127.0.0.1:#{port}/")
    assert_operator result.errors["connect"], :>, 2
    assert_equal 0, result.requests
    assert_equal 0, result.connections["established"]
    assert_equal result.errors["connect"], result.error_count
  end

  it "counts a response cut short by the server as a read error" do
    with_server(:close_mid_response) do |server|
      result = run_load(server.url)
      assert_operator result.errors["read"], :>, 2
      assert_equal 0, result.requests
      assert_equal server.requests, result.errors["read"]
    end
  end

  it "counts garbage as parse errors" do
    with_server(:garbage) do |server|
      result = run_load(server.url)
      assert_operator result.errors["parse"], :>, 2
      assert_equal 0, result.requests
      assert_equal server.requests, result.errors["parse"]
    end
  end

  it "stops endless headers with a parse error, memory bounded" do
    with_server(:endless_headers) do |server|
      result = run_load(server.url)
      assert_operator result.errors["parse"], :>, 0
      assert_equal 0, result.requests
      assert_operator result.data["memory"]["max_rss_bytes"], :<, 64 * 1024 * 1024
    end
  end

  it "times out a server that never answers, and finishes by duration + timeout" do
    with_server(:never_answer) do |server|
      result = run_load(server.url, duration_s: 0.5, timeout_s: 0.3)
      assert_operator result.errors["timeout"], :>=, 2
      assert_equal 0, result.requests
      assert_equal server.requests, result.errors["timeout"]
    end
  end

  it "counts a server that closes right after accept" do
    with_server(:close_after_accept) do |_server|
      result = run_load(_server.url)
      assert_equal 0, result.requests
      failures = result.errors["read"] + result.errors["write"]
      assert_operator failures, :>, 2
      assert_equal failures, result.error_count
    end
  end

  it "keeps going when the server dies mid-run" do
    with_server(:die_after, die_after: 50) do |server|
      result = run_load(server.url, duration_s: 0.8)
      assert_equal 50, result.requests
      assert_equal server.responses, result.requests
      assert_operator result.errors["connect"], :>, 0
    end
  end

  it "takes a kept-alive connection reset while idle as an idle close, not a failed request" do
    server = TCPServer.new("127.0.0.1", 0)
    # Answers one request per connection, then resets it (SO_LINGER 0)
    # 10 ms later, long before the next open-loop request 50 ms on.
    acceptor = Thread.new do
      loop do
        Thread.new(server.accept) do |sock|
          head = +""
          head << sock.readpartial(4096) until head.include?("\r\n\r\n")
          sock.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
          sleep 0.01
          sock.setsockopt(Socket::SOL_SOCKET, Socket::SO_LINGER, [1, 0].pack("ii"))
          sock.close
        rescue IOError, SystemCallError
          nil
        end
      end
    rescue IOError
      nil
    end
    result = run_load("http://127.0.0.1:#{server.addr[1]}/", rate: 20, duration_s: 1.0)
    assert_equal 20, result.requests
    assert_equal 0, result.error_count, result.errors.inspect
    assert_equal result.requests, result.connections["idle_closes"]
  ensure
    server&.close
    acceptor&.join(2)
  end

  it "counts error statuses by code, not as transport errors" do
    with_server(:ok, status: 503) do |server|
      result = run_load(server.url)
      assert_equal({ "503" => result.requests }, result.status)
      assert_equal 0, result.error_count
      assert_equal result.requests, result.bad_status_count
      assert_equal server.requests, result.requests
    end
  end

  it "prints a partial result and exits 0 on SIGTERM" do
    with_server(:ok) do |server|
      argv = Rackbench::LoadEngine.new.argv(Rackbench::LoadSettings.build(url: server.url, duration_s: 30.0))
      Open3.popen3(*argv) do |stdin, stdout, _stderr, thread|
        stdin.close
        wait_until(message: "first requests") { server.requests > 10 }
        Process.kill(:TERM, thread.pid)
        status = nil
        assert_bounded(0, 0) { status = thread.value }
        assert status.success?
        doc = JSON.parse(stdout.read)
        assert doc["interrupted"]
        assert_operator doc["requests"], :>, 0
        assert_operator doc["duration_s"], :<, 30
      end
    end
  end
end

describe "load engine argument errors" do
  before { require_engine! }

  def engine(*args)
    Open3.capture3(Rackbench::LoadEngine.default_binary, *args)
  end

  it "refuses a non-loopback target and says why" do
    _out, err, status = engine("-d", "1", "http://10.1.2.3:8080/")
    assert_equal 2, status.exitstatus
    assert_equal 1, err.lines.size
    assert_match(/not a loopback address.*--allow-remote/, err)
  end

  it "gives one line and exit 2 for each bad value" do
    [
      [%w[-c 0 http://127.0.0.1:1/], /--connections/],
      [%w[-d abc http://127.0.0.1:1/], /--duration/],
      [%w[--rate -5 http://127.0.0.1:1/], /--rate/],
      [%w[--cpus 3-1 http://127.0.0.1:1/], /--cpus/],
      [%w[-H nocolon http://127.0.0.1:1/], /--header/],
      [%w[--timeout 0 http://127.0.0.1:1/], /--timeout/],
      [%w[-t 4 -c 2 http://127.0.0.1:1/], /exceeds --connections/],
      [%w[ftp://127.0.0.1/], /http:\/\//],
      [%w[http://127.0.0.1:99999/], /port/],
      [%w[--bogus http://127.0.0.1:1/], /unknown option/],
      [%w[--requests /nonexistent/file http://127.0.0.1:1/], /cannot open --requests file/],
      [[], /missing URL/]
    ].each do |args, pattern|
      out, err, status = engine(*args)
      assert_equal 2, status.exitstatus, "#{args.inspect}: #{err}"
      assert_equal "", out
      assert_equal 1, err.lines.size, "#{args.inspect}: #{err.inspect}"
      assert_match pattern, err
    end
  end

  it "names the line of a malformed request list" do
    Dir.mktmpdir do |dir|
      path = File.join(dir, "bad.txt")
      File.write(path, "--- weight=2\nGET /ok\n--- wieght=1\nGET /x\n")
      _out, err, status = engine("--requests", path, "http://127.0.0.1:1/")
      assert_equal 2, status.exitstatus
      assert_match(/bad\.txt:3: unknown entry attribute/, err)
    end
  end

  it "reaches the user as one line through rackbench load" do
    out, err, status = rackbench(
                                      "load", "-c", "0", "http://127.0.0.1:1/")
    assert_equal 2, status.exitstatus
    assert_equal "", out
    assert_equal ["rackbench: invalid connections 0 (expected an integer >= 1)\n"], err.lines
  end
end
