# frozen_string_literal: true

require "minitest/autorun"
require "socket"
require "io/wait"
require_relative "../fixtures/fixture_server"

# Namespaced so the helpers cannot clash with other test files in one process.
module FixtureServerSpec
  FS = Rackbench::Test::FixtureServer

  # Minimal blocking HTTP client over a plain TCPSocket; every read has a
  # deadline so a misbehaving server fails the test instead of hanging it.
  class Client
    attr_reader :sock, :reads

    def initialize(port)
      @sock = TCPSocket.new("127.0.0.1", port)
      @buf = +"".b
      @reads = 0
    end

    def write(data) = @sock.write(data)
    def close = @sock.close

    # Appends one read to the buffer; false on EOF (or reset).
    def read_more(timeout = 2)
      raise "timed out waiting for data" unless @sock.wait_readable(timeout)

      @buf << @sock.readpartial(64 * 1024)
      @reads += 1
      true
    rescue EOFError, Errno::ECONNRESET
      false
    end

    def take(n)
      while @buf.bytesize < n
        raise "EOF before #{n} bytes" unless read_more
      end
      @buf.slice!(0, n)
    end

    def take_until(sep)
      until (i = @buf.index(sep))
        raise "EOF before #{sep.inspect}" unless read_more
      end
      @buf.slice!(0, i + sep.bytesize)
    end

    def read_to_eof
      nil while read_more
      @buf.slice!(0..)
    end

    # True if the server closes (EOF or RST) and sends nothing more.
    def eof?(timeout = 2)
      !read_more(timeout) && @buf.empty?
    end

    # Returns [status_line, headers(lowercased), body, raw_body_bytes].
    def response(head: false)
      status, *lines = take_until("\r\n\r\n").split("\r\n")
      headers = lines.to_h { |l| k, v = l.split(":", 2); [k.downcase, v.strip] }
      if head then [status, headers, "", ""]
      elsif headers["transfer-encoding"] == "chunked" then chunked(status, headers)
      elsif headers["content-length"]
        body = take(headers["content-length"].to_i)
        [status, headers, body, body]
      else
        body = read_to_eof
        [status, headers, body, body]
      end
    end

    def chunked(status, headers)
      raw = +"".b
      body = +"".b
      loop do
        size_line = take_until("\r\n")
        size = Integer(size_line.strip, 16)
        data = take(size + 2)
        raw << size_line << data
        raise "bad chunk terminator" unless data.end_with?("\r\n")
        return [status, headers, body, raw] if size.zero?

        body << data.byteslice(0, size)
      end
    end
  end

  describe FS do
    def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    # Polls a condition until a deadline; the only sleep is the poll interval.
    def wait_until(timeout = 2)
      deadline = now + timeout
      until yield
        flunk "condition not met within #{timeout}s" if now > deadline
        sleep 0.002
      end
    end

    def start(**opts)
      @server = FS.new(**opts).start
    end

    # A connected client, registered for closing; optionally sends data at once.
    def client(data = nil)
      (@clients << Client.new(@server.port)).last.tap { |c| c.write(data) if data }
    end
    def get(path = "/", extra = "") = "GET #{path} HTTP/1.1\r\nHost: x\r\n#{extra}\r\n"

    before { @clients = [] }

    after do
      @clients.each(&:close)
      next unless @server

      t0 = now
      @server.stop # every test also checks that stop is quick
      assert_operator now - t0, :<, 1.0
      assert_empty @server.errors
    end

    describe ":ok" do
      it "answers and counts exactly, with a bounded-detail request log" do
        start(body: "hi\n")
        c = client("GET /a?x=1 HTTP/1.1\r\nHost: x\r\nX-Test: Yes\r\n\r\n")
        status, headers, body = c.response
        assert_equal "HTTP/1.1 200 OK", status
        assert_equal "text/plain", headers["content-type"]
        assert_equal "3", headers["content-length"]
        refute headers.key?("connection")
        assert_equal "hi\n", body
        wait_until { @server.responses == 1 }
        assert_equal [1, 1], [@server.accepts, @server.requests]
        assert_equal({ "/a?x=1" => 1 }, @server.requests_by_path)
        assert_equal [["GET", "/a?x=1", { "host" => "x", "x-test" => "Yes" }, ""]], @server.request_log
        assert_match %r{\Ahttp://127\.0\.0\.1:\d+/\z}, @server.url
      end

      it "answers two pipelined requests sent in one write, keeping the connection" do
        start
        c = client(get("/one") + get("/two"))
        2.times { assert_equal "hello world\n", c.response[2] }
        c.write(get("/one"))
        assert_equal "hello world\n", c.response[2]
        wait_until { @server.responses == 3 }
        assert_equal [1, 3], [@server.accepts, @server.requests]
        assert_equal({ "/one" => 2, "/two" => 1 }, @server.requests_by_path)
      end

      it "handles requests split across reads and Content-Length bodies" do
        start
        c = client
        req = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabcde"
        req.each_char { |ch| c.write(ch) } # one byte per write
        assert_equal "HTTP/1.1 200 OK", c.response[0]
        assert_equal ["POST", "/p", { "host" => "x", "content-length" => "5" }, "abcde"], @server.request_log.last
      end

      it "honours Connection: close" do
        start
        c = client(get("/", "Connection: close\r\n") + get("/ignored"))
        _, headers, body = c.response
        assert_equal "close", headers["connection"]
        assert_equal "hello world\n", body
        assert c.eof?
        assert_equal 1, @server.requests
      end

      it "closes after an HTTP/1.0 request unless keep-alive was asked for" do
        start
        c = client("GET / HTTP/1.0\r\n\r\n")
        assert_equal "close", c.response[1]["connection"]
        assert c.eof?
        c2 = client("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        assert_equal "keep-alive", c2.response[1]["connection"]
        c2.write("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        assert_equal "HTTP/1.1 200 OK", c2.response[0]
      end

      it "answers /status/NNN, the status option and HEAD" do
        start(status: 201)
        c = client(get("/status/503") + get("/") + get("/status/204") + "HEAD / HTTP/1.1\r\n\r\n")
        assert_equal "HTTP/1.1 503 Service Unavailable", c.response[0]
        assert_equal "HTTP/1.1 201 Created", c.response[0]
        status, headers, = c.response(head: true)
        assert_equal "HTTP/1.1 204 No Content", status
        refute headers.key?("content-length")
        _, headers, = c.response(head: true)
        assert_equal "12", headers["content-length"]
        c.write(get("/"))
        assert_equal "hello world\n", c.response[2] # HEAD sent no body bytes
      end

      it "delays each response by delay_ms" do
        start(delay_ms: 80)
        t0 = now
        c = client(get + get)
        2.times { c.response }
        assert_operator now - t0, :>=, 0.16
      end

      it "rejects malformed requests with 400 and oversize heads by closing" do
        start
        c = client("NONSENSE\r\n\r\n")
        assert_equal "HTTP/1.1 400 Bad Request", c.response[0]
        assert c.eof?
        c2 = client
        begin
          c2.write("GET / HTTP/1.1\r\nX-Big: #{'a' * 70_000}")
        rescue Errno::EPIPE, Errno::ECONNRESET
          # fine: the server may already have closed on us
        end
        assert c2.eof?
        assert_equal 0, @server.requests
      end

      it "counts exactly under concurrency and bounds the request log" do
        start
        threads = Array.new(8) do
          Thread.new do
            c = Client.new(@server.port)
            c.write(get * 150)
            150.times { c.response }
            c.close
          end
        end
        threads.each(&:join)
        wait_until { @server.responses == 1200 }
        assert_equal [8, 1200], [@server.accepts, @server.requests]
        assert_equal 1000, @server.request_log.size
      end
    end

    it ":chunked sends a valid chunked body in several chunks" do
      start(mode: :chunked, body: "abcdefghij")
      c = client(get + get)
      2.times do
        _, headers, body, raw = c.response
        assert_equal "chunked", headers["transfer-encoding"]
        refute headers.key?("content-length")
        assert_equal "abcdefghij", body
        assert_equal "4\r\nabcd\r\n4\r\nefgh\r\n2\r\nij\r\n0\r\n\r\n", raw
      end
    end

    it ":split writes the response in small pieces" do
      start(mode: :split, body: "x" * 200)
      c = client(get)
      assert_equal "x" * 200, c.response[2]
      assert_operator c.reads, :>=, 2
      wait_until { @server.responses == 1 }
    end

    it ":ignore_close keeps the connection open despite Connection: close" do
      start(mode: :ignore_close)
      c = client(get("/", "Connection: close\r\n"))
      refute c.response[1].key?("connection")
      c.write(get("/", "Connection: close\r\n"))
      assert_equal "hello world\n", c.response[2]
      assert_equal [1, 2], [@server.accepts, @server.requests]
    end

    it ":close_mid_response sends 10 of 100 promised bytes, then closes" do
      start(mode: :close_mid_response)
      c = client(get)
      data = c.read_to_eof
      assert_match(/\AHTTP\/1\.1 200 OK\r\n.*Content-Length: 100\r\n\r\n0123456789\z/m, data)
      assert_equal [1, 0], [@server.requests, @server.responses]
    end

    it ":garbage answers with the same non-HTTP bytes, then closes" do
      start(mode: :garbage)
      a = client(get)
      b = client(get)
      bytes = a.read_to_eof
      assert_equal FS::GARBAGE, bytes
      refute bytes.start_with?("H")
      assert_equal bytes, b.read_to_eof
      wait_until { @server.requests == 2 }
      assert_equal 0, @server.responses
    end

    it ":endless_headers streams header lines until the client leaves" do
      start(mode: :endless_headers)
      c = client(get)
      assert_equal "HTTP/1.1 200 OK\r\n", c.take_until("\r\n")
      data = +"".b
      data << c.take(4096) while data.bytesize < 200_000
      refute_includes data, "\r\n\r\n"
      line = FS::ENDLESS_CHUNK.lines.first.chomp
      assert data.split("\r\n")[0..-2].all? { |l| l == line } # last line may be cut short
      c.close
      c2 = client(get) # server still healthy; stop (in after) must not hang
      assert_equal "HTTP/1.1 200 OK\r\n", c2.take_until("\r\n")
    end

    it ":never_answer reads requests, never responds, and stop closes the socket" do
      start(mode: :never_answer)
      c = client(get + get)
      wait_until { @server.requests == 2 }
      refute c.sock.wait_readable(0.05)
      t0 = now
      @server.stop
      assert_operator now - t0, :<, 0.5
      assert c.eof?
    end

    it ":close_after_accept closes without reading" do
      start(mode: :close_after_accept)
      c = client(get)
      assert c.eof?
      assert_equal [1, 0], [@server.accepts, @server.requests]
    end

    it ":die_after serves exactly N responses, then dies and refuses connects" do
      start(mode: :die_after, die_after: 3)
      idle = client
      c = client(get + get)
      2.times { c.response }
      c2 = client(get)
      assert_equal "hello world\n", c2.response[2]
      assert c2.eof?
      assert c.eof?
      assert idle.eof?
      assert_equal 3, @server.responses
      assert_raises(Errno::ECONNREFUSED) { TCPSocket.new("127.0.0.1", @server.port) }
    end

    it ":die_after never exceeds N under concurrent load" do
      start(mode: :die_after, die_after: 5)
      threads = Array.new(4) do
        Thread.new do
          # One request at a time: pipelined leftovers would make the dying
          # server's close an RST, which may discard a delivered response.
          c = Client.new(@server.port)
          n = 0
          10.times do
            c.write(get)
            c.response
            n += 1
          end
          n
        rescue RuntimeError, SystemCallError # EOF, refused or reset once dead
          n || 0
        ensure
          c&.close
        end
      end
      assert_equal 5, threads.sum(&:value)
      assert_equal 5, @server.responses
    end

    it ":http10 answers HTTP/1.0 with Content-Length, then closes" do
      start(mode: :http10)
      c = client(get)
      status, headers, body = c.response
      assert_equal "HTTP/1.0 200 OK", status
      assert_equal "12", headers["content-length"]
      refute headers.key?("connection")
      assert_equal "hello world\n", body
      assert c.eof?
      wait_until { @server.responses == 1 }
    end

    it ":no_length sends a close-delimited body" do
      start(mode: :no_length)
      c = client(get)
      status, headers, body = c.response
      assert_equal "HTTP/1.1 200 OK", status
      refute headers.key?("content-length")
      refute headers.key?("transfer-encoding")
      assert_equal "hello world\n", body
      wait_until { @server.responses == 1 }
    end

    describe "lifecycle" do
      it "stops quickly and idempotently with busy connections" do
        start(delay_ms: 10_000)
        c = client(get)
        client # idle connection
        wait_until { @server.requests == 1 }
        port = @server.port
        t0 = now
        assert_same @server, @server.stop
        @server.stop
        assert_operator now - t0, :<, 0.5
        assert c.eof?
        assert_raises(Errno::ECONNREFUSED) { TCPSocket.new("127.0.0.1", port) }
      end

      it "open yields a started server and always stops it" do
        seen = nil
        assert_raises(RuntimeError) do
          FS.open(mode: :ok) do |s|
            seen = s
            c = Client.new(s.port)
            c.write("GET / HTTP/1.1\r\n\r\n")
            assert_equal "hello world\n", c.response[2]
            c.close
            raise "boom"
          end
        end
        assert_raises(Errno::ECONNREFUSED) { TCPSocket.new("127.0.0.1", seen.port) }
        assert_equal 42, FS.open { 42 }
      end

      it "rejects unknown modes and a missing die_after" do
        assert_raises(ArgumentError) { FS.new(mode: :bogus) }
        assert_raises(ArgumentError) { FS.new(mode: :die_after) }
        assert_raises(ArgumentError) { FS.new(mode: :die_after, die_after: 0) }
      end

      it "can be stopped before it was started" do
        server = FS.new(mode: :chunked)
        assert_equal :chunked, server.mode
        assert_same server, server.stop
        assert_nil server.port
      end
    end
  end
end
