# frozen_string_literal: true

require "test_helper"
require "socket"
require "io/wait"
require_relative "../fixtures/stalling_server"

# The fixture the open-loop integration tests lean on: it must answer
# exactly the first answer_first requests, hold the rest, and let go at stop.
describe Rackbench::Test::StallingServer do
  request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
  response = Rackbench::Test::StallingServer::RESPONSE

  def read_exactly(sock, bytes)
    data = +""
    while data.bytesize < bytes
      raise "no data within 5 s" unless sock.wait_readable(5)

      data << sock.readpartial(bytes - data.bytesize)
    end
    data
  end

  it "answers the first answer_first requests and holds the later ones until stop" do
    server = Rackbench::Test::StallingServer.new(answer_first: 2, stall_s: 60.0).start
    sock = TCPSocket.new("127.0.0.1", server.port)
    sock.write(request * 3)
    assert_equal response * 2, read_exactly(sock, response.bytesize * 2)
    wait_until(message: "third request read") { server.requests == 3 }
    refute sock.wait_readable(0.05), "the third request was answered"
    assert_equal 2, server.responses
    refute_nil server.first_request_at
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    server.stop
    # Half the stall: a stop that waited it out would take all 60 s; no
    # claim on how fast a stop is.
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 30.0, "stop waited out the stall"
    assert_equal "", sock.read.to_s # closed, nothing more written
    assert_equal 2, server.responses
  ensure
    sock&.close
    server&.stop
  end

  it "answers everything without answer_first" do
    Rackbench::Test::StallingServer.open do |server|
      assert_nil server.first_request_at
      TCPSocket.open("127.0.0.1", server.port) do |sock|
        sock.write(request * 5)
        assert_equal response * 5, read_exactly(sock, response.bytesize * 5)
      end
      wait_until(message: "responses counted") { server.responses == 5 }
      assert_equal 5, server.requests
    end
  end
end
