# frozen_string_literal: true

require "test_helper"
require_relative "../support/options_app"

# Every server option, shown to take effect by the real server: in its own
# log, in what its processes did (which PID loaded the app), or in how it
# treats a connection. Each adapter boots twice: once with its options set,
# once with them off or absent, so every boolean is seen both ways. The
# fixture app (test/fixtures/servers/options_app) records which processes
# load it and which requests reach it. WEBrick takes no options (unit
# tests show they are refused); it is not booted here.
describe "server options on real servers" do
  include OptionsApp

  # 12 KB of headers, in lines of 4 KB (Iodine refuses any single header
  # line above 8 KB whatever max_header says).
  BIG_HEADERS = (1..3).to_h { |i| ["X-Big-#{i}", "x" * 4096] }
  TWO_MB = "b" * (2 * 1024 * 1024)

  # Worker index => PID, from Puma's "Worker N (PID: P) booted" lines.
  def puma_workers(booted)
    booted.log.scan(/Worker (\d+) \(PID: (\d+)\) booted/).to_h { |index, pid| [index.to_i, pid.to_i] }
  end

  # Blocks the only worker with /block?first, queues a request whose client
  # has already gone, releases the worker and waits until it has served a
  # later request: by then it has dealt with the abandoned one.
  def serve_abandoned_request(booted)
    blocker = RawHTTP.connect(booted.port)
    RawHTTP.send_request(blocker, "/block?first")
    wait_until(timeout_s: 30, message: "the worker to start /block?first") { booted.called.include?("first") }
    abandon(booted.port, "/called?gone")
    booted.release("first")
    assert_equal 200, RawHTTP.read_response(blocker).status
    blocker.close
    assert_equal "called after", RawHTTP.get(booted.port, "/called?after").body
  end

  # The status of a request the server may refuse while it is still being
  # sent: then the server answers 413 and closes, and the client sees the
  # answer, or only the reset (:reset) or the end of the connection (nil).
  def status_or_refusal(port, path, **options)
    RawHTTP.get(port, path, **options)&.status
  rescue Errno::ECONNRESET, Errno::EPIPE
    :reset
  end

  # GETs a path on one keep-alive connection +count+ times, returning the
  # responses.
  def keep_alive_responses(port, path, count)
    socket = RawHTTP.connect(port)
    Array.new(count) { RawHTTP.request(socket, path) }
  ensure
    socket&.close
  end

  it "puma: preload, fork_worker, queue_requests, keep-alive settings and backlog" do
    log_config = { "PUMA_LOG_CONFIG" => "1" }
    set = { "preload" => true, "fork_worker" => 0, "queue_requests" => false, "enable_keep_alives" => false,
            "wait_for_less_busy_worker" => 0, "persistent_timeout" => 7, "backlog" => 77 }
    boot("puma", set, processes: 2, threads: 2, env: log_config) do |booted|
      log = booted.log
      ["- preload_app: true", "- fork_worker: 0", "- queue_requests: false", "- enable_keep_alives: false",
       "- wait_for_less_busy_worker: 0.0", "- persistent_timeout: 7"].each { |line| assert_includes log, line }
      # preload: the master loaded the app, and no worker did.
      assert_includes log, "Preloading application"
      assert_equal [booted.pid], booted.loaded_by
      # fork_worker: worker 1 is a child of worker 0, not of the master.
      workers = puma_workers(booted)
      assert_equal booted.pid, booted.ppid(workers.fetch(0))
      assert_equal workers.fetch(0), booted.ppid(workers.fetch(1))
      # queue_requests false (and enable_keep_alives false): no keep-alive.
      response = keep_alive_responses(booted.port, "/", 1).first
      assert_equal "close", response.connection
      assert_equal 77, booted.listen_backlog
    end

    unset = { "preload" => false, "queue_requests" => true, "enable_keep_alives" => true, "max_keep_alive" => 2 }
    boot("puma", unset, processes: 2, threads: 2, env: log_config) do |booted|
      log = booted.log
      ["- preload_app: false", "- queue_requests: true", "- enable_keep_alives: true",
       "- max_keep_alive: 2.0"].each { |line| assert_includes log, line }
      refute_match(/^- fork_worker: \d/, log)
      # No preload: each worker loaded the app itself, the master did not.
      refute_includes log, "Preloading application"
      workers = puma_workers(booted)
      assert_equal workers.values.sort, booted.loaded_by.sort
      refute_includes booted.loaded_by, booted.pid
      # Without fork_worker every worker is the master's child.
      workers.each_value { |pid| assert_equal booted.pid, booted.ppid(pid) }
      # Keep-alive until max_keep_alive requests have been served.
      first, second = keep_alive_responses(booted.port, "/", 2)
      refute_equal "close", first.connection
      assert_equal "close", second.connection
      assert_equal 1024, booted.listen_backlog
    end
  end

  it "unicorn: preload_app, check_client_connection, timeout and backlog" do
    set = { "preload_app" => true, "check_client_connection" => true, "timeout" => 3, "backlog" => 77 }
    boot("unicorn", set, processes: 1) do |booted|
      assert_equal [booted.pid], booted.loaded_by, "with preload_app the master alone loads the app"
      serve_abandoned_request(booted)
      assert_equal %w[first after], booted.called, "the abandoned request must not reach the app"
      assert_equal 77, booted.listen_backlog
      # A request busy for longer than the timeout: the master kills its worker.
      hung = RawHTTP.connect(booted.port)
      RawHTTP.send_request(hung, "/block?hang")
      wait_until(timeout_s: 60, message: "unicorn to kill the hung worker") { booted.log.match?(/timeout \(\d+s > 3s\), killing/) }
      hung.close
    end

    boot("unicorn", { "preload_app" => false, "check_client_connection" => false }, processes: 1) do |booted|
      worker = booted.loaded_by
      assert_equal 1, worker.size
      refute_equal booted.pid, worker.first, "without preload_app the worker loads the app"
      assert_equal booted.pid, booted.ppid(worker.first)
      serve_abandoned_request(booted)
      assert_equal %w[first gone after], booted.called, "without the check the abandoned request reaches the app"
      assert_equal 1024, booted.listen_backlog
    end
  end

  it "pitchfork: refork_after, check_client_connection, timeout and backlog" do
    set = { "refork_after" => [3], "check_client_connection" => true, "timeout" => 3, "backlog" => 77 }
    boot("pitchfork", set, processes: 1) do |booted|
      serve_abandoned_request(booted)
      assert_equal %w[first after], booted.called
      assert_equal 77, booted.listen_backlog
      # After 3 requests a worker becomes the next generation's mold.
      wait_until(timeout_s: 60, message: "a generation 1 mold") do
        RawHTTP.get(booted.port, "/")
        booted.log.match?(/gen=1/)
      end
      # The mold loaded the app once; workers (and the new mold) are forks.
      assert_equal 1, booted.loaded_by.size
      refute_equal booted.pid, booted.loaded_by.first
      hung = RawHTTP.connect(booted.port)
      RawHTTP.send_request(hung, "/block?hang")
      wait_until(timeout_s: 60, message: "pitchfork to stop the hung worker") { booted.log.match?(/timed out/) }
      hung.close
    end

    boot("pitchfork", { "check_client_connection" => false }, processes: 1) do |booted|
      serve_abandoned_request(booted)
      assert_equal %w[first gone after], booted.called
      assert_equal 1024, booted.listen_backlog
      10.times { assert_equal 200, RawHTTP.get(booted.port, "/").status }
      refute_match(/gen=1/, booted.log, "no reforking without refork_after")
    end
  end

  it "falcon: cache, timeout and preload" do
    boot("falcon", { "cache" => true, "timeout" => 1, "preload" => "preload.rb" }, processes: 1) do |booted|
      assert_equal [booted.pid], booted.preloaded_by, "the controller loads the preload script"
      assert_includes booted.log, "Preloading preload.rb"
      refute_includes booted.loaded_by, booted.pid, "the children load the app itself"
      first, second = Array.new(2) { RawHTTP.get(booted.port, "/called?cached") }
      assert_equal [nil, "hit"], [first.headers["x-cache"], second.headers["x-cache"]]
      assert_equal ["cached"], booted.called, "the cache answered the second request"
      assert_match(/timeout.{1,4}1\.0/, booted.log[/Starting .*/].to_s)
      # Falcon times out a keep-alive connection idle after a request.
      idle = RawHTTP.connect(booted.port)
      assert_equal 200, RawHTTP.request(idle, "/").status
      assert RawHTTP.closed_by_server?(idle, timeout_s: 30), "an idle connection outlived the timeout"
      idle.close
    end

    boot("falcon", { "cache" => false }, processes: 1) do |booted|
      assert_empty booted.preloaded_by
      refute_includes booted.log, "Preloading"
      responses = Array.new(2) { RawHTTP.get(booted.port, "/called?uncached") }
      responses.each { |response| assert_nil response.headers["x-cache"] }
      assert_equal %w[uncached uncached], booted.called
      refute_match(/timeout/, booted.log[/Starting .*/].to_s)
    end
  end

  it "thin: max_conns, max_persistent_conns, no_epoll and timeout" do
    # timeout 0: no inactivity timeout, so the kept connection stays open
    # for as long as the test needs it.
    set = { "max_conns" => 77, "max_persistent_conns" => 1, "no_epoll" => true, "timeout" => 0 }
    log = boot("thin", set, processes: 1) do |booted|
      assert_equal 0, booted.epoll_fds(booted.pid), "--no-epoll: EventMachine polls without epoll"
      kept = RawHTTP.connect(booted.port)
      assert_equal 200, RawHTTP.request(kept, "/").status
      # The one persistent connection is taken: Thin closes the next one
      # after its response (its header still says keep-alive).
      other = RawHTTP.connect(booted.port)
      assert_equal 200, RawHTTP.request(other, "/").status
      assert RawHTTP.closed_by_server?(other, timeout_s: 30), "a second connection was kept open"
      assert_equal 200, RawHTTP.request(kept, "/").status, "the persistent connection serves on"
      [kept, other].each(&:close)
    end
    assert_includes log, "Maximum connections set to 77" # Thin's log reaches the file when it exits

    log = boot("thin", { "no_epoll" => false, "timeout" => 1 }, processes: 1) do |booted|
      assert_operator booted.epoll_fds(booted.pid), :>=, 1
      # With the default of 100 persistent connections a second one serves
      # a second request too.
      first = RawHTTP.connect(booted.port)
      second = RawHTTP.connect(booted.port)
      [first, second, second].each { |socket| assert_equal 200, RawHTTP.request(socket, "/").status }
      # Inactive for the timeout (1 s): closed.
      assert RawHTTP.closed_by_server?(first, timeout_s: 30), "an idle connection outlived the timeout"
      [first, second].each(&:close)
    end
    assert_includes log, "Maximum connections set to 1024"
  end

  it "iodine: log, max_body, max_header and keep_alive" do
    boot("iodine", { "log" => true, "max_body" => 1, "max_header" => 8, "keep_alive" => 1 }, processes: 1) do |booted|
      assert_equal 200, RawHTTP.get(booted.port, "/pid").status
      wait_until(timeout_s: 30, message: "iodine's request log line") { booted.log.include?('"GET /pid HTTP/1.1" 200') }
      assert_includes [413, :reset, nil], status_or_refusal(booted.port, "/upload", method: "POST", body: TWO_MB),
                      "a 2 MB body is above max_body 1"
      assert_includes [413, :reset, nil], status_or_refusal(booted.port, "/", headers: BIG_HEADERS),
                      "12 KB of headers are above max_header 8"
      idle = RawHTTP.connect(booted.port)
      assert_equal 200, RawHTTP.request(idle, "/").status
      assert RawHTTP.closed_by_server?(idle, timeout_s: 30), "an idle connection outlived keep_alive"
      idle.close
    end

    log = boot("iodine", { "log" => false }, processes: 2) do |booted|
      assert_equal [booted.pid], booted.loaded_by, "iodine's root loads the app before forking (no preload option)"
      assert_equal 200, RawHTTP.get(booted.port, "/pid").status
      assert_equal TWO_MB.bytesize.to_s, RawHTTP.get(booted.port, "/upload", method: "POST", body: TWO_MB).body
      assert_equal 200, RawHTTP.get(booted.port, "/", headers: BIG_HEADERS).status
    end
    refute_includes log, "GET /pid", "no request log without log: true"
  end

  it "agoo: pedantic and connection_timeout" do
    boot("agoo", { "pedantic" => true, "connection_timeout" => 1 }, processes: 1) do |booted|
      assert_equal 200, RawHTTP.get(booted.port, "/").status
      assert_equal 500, RawHTTP.get(booted.port, "/custom").status, "pedantic refuses an unknown header"
      idle = RawHTTP.connect(booted.port)
      assert RawHTTP.closed_by_server?(idle, timeout_s: 30), "an idle connection outlived connection_timeout"
      idle.close
    end

    boot("agoo", { "pedantic" => false }, processes: 1) do |booted|
      response = RawHTTP.get(booted.port, "/custom")
      assert_equal [200, "1"], [response.status, response.headers["x-rackbench-probe"]]
    end
  end
end
