# frozen_string_literal: true

require "socket"

module Rackbench
  module Services
    # Where a started service answers:
    #
    # socket :: a unix socket: PostgreSQL's socket directory, Redis's socket file; nil for memcached
    # port :: the loopback TCP port the app connects to, or nil when the app gets the socket;
    #         PostgreSQL also names its socket file after it (.s.PGSQL.PORT)
    #
    # rackbench itself talks to a service over its socket when it has one,
    # over the port otherwise.
    # tcp :: whether the app connects over port (else over socket)
    Endpoint = Struct.new(:socket, :port, :tcp, keyword_init: true) do
      # True when the app reaches the service over TCP.
      def tcp?
        tcp
      end

      # "unix socket /tmp/.../redis.sock", "127.0.0.1:11211".
      def to_s
        tcp? ? "#{Ports::LOCALHOST}:#{port}" : "unix socket #{socket}"
      end

      # A connection for rackbench's own commands (Resp, Memcached).
      def admin_socket
        socket && !File.directory?(socket) ? UNIXSocket.new(socket) : TCPSocket.new(Ports::LOCALHOST, port)
      end
    end
  end
end
