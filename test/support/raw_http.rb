# frozen_string_literal: true

require "socket"

# A tiny HTTP/1.1 client for tests that must control connections
# themselves: keep one open, send a request and close before the answer,
# see whether the server closed it. Every read has a deadline.
module RawHTTP
  Response = Struct.new(:status, :headers, :body, keyword_init: true) do
    # The Connection header, lowercased ("close", "keep-alive"), or nil.
    def connection
      headers["connection"]&.downcase
    end
  end

  module_function

  def connect(port)
    TCPSocket.new("127.0.0.1", port)
  end

  # Writes one request to +socket+ (headers: Hash; a body gets its
  # Content-Length).
  def send_request(socket, path, method: "GET", headers: {}, body: nil)
    lines = ["#{method} #{path} HTTP/1.1", "Host: 127.0.0.1", *headers.map { |name, value| "#{name}: #{value}" }]
    lines << "Content-Length: #{body.bytesize}" if body
    socket.write("#{lines.join("\r\n")}\r\n\r\n#{body}")
  end

  # Sends a request and reads its response; nil when the server closed the
  # connection without one.
  def request(socket, path, timeout_s: 30, **options)
    send_request(socket, path, **options)
    read_response(socket, timeout_s: timeout_s)
  end

  # One request on a connection of its own, closed afterwards.
  def get(port, path, timeout_s: 30, **options)
    socket = connect(port)
    request(socket, path, timeout_s: timeout_s, **options)
  ensure
    socket&.close
  end

  # Reads one response (a Content-Length body, or a body up to the end of
  # the connection); nil on end of connection before a status line.
  def read_response(socket, timeout_s: 30)
    deadline = now + timeout_s
    buffer = +""
    until (head_end = buffer.index("\r\n\r\n"))
      return nil unless read_more(socket, buffer, deadline)
    end
    status_line, *header_lines = buffer[0, head_end].split("\r\n")
    headers = header_lines.to_h { |line| line.split(":", 2).map(&:strip).then { |k, v| [k.downcase, v] } }
    body = buffer[(head_end + 4)..]
    if (length = headers["content-length"])
      while body.bytesize < Integer(length)
        raise IOError, "connection closed in the middle of a body" unless read_more(socket, body, deadline)
      end
    else
      nil while read_more(socket, body, deadline)
    end
    Response.new(status: Integer(status_line.split[1]), headers: headers, body: body)
  end

  # True once the server has closed +socket+ (end of file or reset);
  # false if it is still open when +timeout_s+ has passed.
  def closed_by_server?(socket, timeout_s:)
    deadline = now + timeout_s
    loop do
      left = deadline - now
      return false if left <= 0
      next unless socket.wait_readable(left)
      # Data (a late response, a 408) is skipped: only the end counts.
      return true if socket.read_nonblock(4096, exception: false).nil?
    end
  rescue Errno::ECONNRESET
    true
  end

  # Appends what arrives to +buffer+; nil at end of connection; raises
  # on the deadline.
  def read_more(socket, buffer, deadline)
    left = deadline - now
    raise IOError, "no response before the deadline" if left <= 0 || !socket.wait_readable(left)

    chunk = socket.read_nonblock(65_536, exception: false)
    return nil if chunk.nil?
    return buffer if chunk == :wait_readable

    buffer << chunk
  rescue Errno::ECONNRESET
    nil
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end
end
