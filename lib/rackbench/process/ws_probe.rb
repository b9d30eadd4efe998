# frozen_string_literal: true

require "base64"
require "digest/sha1"
require "json"
require "securerandom"
require "socket"

module Rackbench
  # One WebSocket client connection of the runner's own, the proof that a
  # booted server serves the app's upgrade (Trial::Ws's identity check):
  # the Upgrade sent and its 101 checked (the accept key the RFC computes
  # from ours, the subprotocol offered), then the server's text messages
  # read until one carries the proof the built-in apps send a client that
  # asks for it (?rackbench_proof=1): {"rackbench_proof": {"pid", "via",
  # "server"}}. Action Cable wraps nothing around a transmitted Hash, so a
  # channel's connection sends it the same way.
  #
  # Only what the proof needs: unmasked server frames of up to 64 KiB,
  # text, ping and close; the load engine is the WebSocket client that
  # measures.
  class WsProbe
    GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    MAX_MESSAGE_BYTES = 64 * 1024
    OPCODES = { 0x0 => :continuation, 0x1 => :text, 0x2 => :binary, 0x8 => :close, 0x9 => :ping, 0xA => :pong }.freeze

    # What the upgrade answered: the proof's Hash (nil when the app sent
    # none within the time), the subprotocol chosen, the 101's headers.
    Answer = Struct.new(:proof, :protocol, :headers, keyword_init: true)

    # Read past the end of what is needed (when the deadline passed).
    class Timeout < StandardError; end

    # Upgrades on ws://host:port/path_and_query (with the Action Cable
    # subprotocol when cable), and reads messages until the proof or
    # timeout_s. Returns an Answer; raises SetupError naming what went
    # wrong.
    def self.upgrade(host:, port:, path:, cable: false, timeout_s: 10.0)
      new.upgrade(host: host, port: port, path: path, cable: cable, timeout_s: timeout_s)
    end

    def initialize
      @rest = "".b # bytes read past what was taken
    end

    def upgrade(host:, port:, path:, cable:, timeout_s:)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
      socket = Socket.tcp(host, port, connect_timeout: timeout_s)
      key = Base64.strict_encode64(SecureRandom.bytes(16))
      socket.write(request(host, port, path, key, cable))
      headers = response_headers(socket, deadline, key, cable)
      Answer.new(proof: proof(socket, deadline), protocol: headers["sec-websocket-protocol"], headers: headers)
    rescue Timeout
      raise SetupError, "no answer to the WebSocket upgrade on #{host}:#{port}#{path} within #{timeout_s} s"
    rescue SystemCallError, IOError, SocketError => e
      raise SetupError, "WebSocket upgrade on #{host}:#{port}#{path} failed: #{e.message}"
    ensure
      close(socket) if socket
    end

    private

    def request(host, port, path, key, cable)
      lines = ["GET #{path} HTTP/1.1", "Host: #{host}:#{port}", "Upgrade: websocket", "Connection: Upgrade",
               "Sec-WebSocket-Key: #{key}", "Sec-WebSocket-Version: 13", "Origin: http://#{host}:#{port}"]
      lines << "Sec-WebSocket-Protocol: actioncable-v1-json" if cable
      "#{lines.join("\r\n")}\r\n\r\n"
    end

    # The 101's headers (names in lower case), checked.
    def response_headers(socket, deadline, key, cable)
      head = "".b
      head << read_some(socket, deadline) until head.include?("\r\n\r\n")
      top, @rest = head.split("\r\n\r\n", 2)
      status, *lines = top.split("\r\n")
      raise SetupError, "the WebSocket upgrade was answered #{status.inspect}, not 101" unless status.to_s.match?(/\AHTTP\/1\.1 101\b/)

      headers = lines.to_h { |line| name, value = line.split(":", 2); [name.strip.downcase, value.to_s.strip] }
      accept = Base64.strict_encode64(Digest::SHA1.digest(key + GUID))
      raise SetupError, "the WebSocket upgrade's Sec-WebSocket-Accept is not the key's" unless headers["sec-websocket-accept"] == accept
      if cable && headers["sec-websocket-protocol"] != "actioncable-v1-json"
        raise SetupError, "the server did not choose Action Cable's subprotocol (actioncable-v1-json)"
      end
      headers
    end

    # The first text message that holds a proof, or nil at the deadline
    # or the server's close.
    def proof(socket, deadline)
      loop do
        opcode, payload = frame(socket, deadline)
        return nil if opcode.nil? || opcode == :close
        next unless opcode == :text

        message = JSON.parse(payload) rescue nil # rubocop:disable Style/RescueModifier
        found = message.is_a?(Hash) && message["rackbench_proof"]
        return found if found.is_a?(Hash)
      end
    end

    # [opcode, payload] of the next frame, nil at the deadline.
    def frame(socket, deadline)
      header = take(socket, 2, deadline) or return nil
      first, second = header.bytes
      length = second & 0x7F
      length = take(socket, 2, deadline)&.unpack1("n") if length == 126
      length = take(socket, 8, deadline)&.unpack1("Q>") if length == 127
      return nil if length.nil?
      raise SetupError, "the server sent a WebSocket frame of #{length} bytes to the proof" if length > MAX_MESSAGE_BYTES
      raise SetupError, "the server sent a masked WebSocket frame" if second & 0x80 != 0

      payload = length.zero? ? "".b : take(socket, length, deadline)
      payload && [OPCODES[first & 0x0F], payload.force_encoding(Encoding::UTF_8)]
    end

    # count bytes, from what was read past the headers first.
    def take(socket, count, deadline)
      @rest << read_some(socket, deadline) while @rest.bytesize < count
      @rest.slice!(0, count)
    rescue Timeout
      nil
    end

    def read_some(socket, deadline)
      left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
      raise Timeout if left <= 0 || !socket.wait_readable(left)

      data = socket.read_nonblock(16_384, exception: false)
      raise Timeout if data == :wait_readable
      raise EOFError, "the server closed the connection" if data.nil?

      data.b
    end

    # A masked close frame (1000), then the socket.
    def close(socket)
      mask = SecureRandom.bytes(4)
      payload = [1000].pack("n").bytes.each_with_index.map { |b, i| b ^ mask.getbyte(i % 4) }.pack("C*")
      socket.write_nonblock([0x88, 0x80 | 2].pack("CC") + mask + payload, exception: false)
    rescue SystemCallError, IOError
      nil
    ensure
      socket.close
    end
  end
end
