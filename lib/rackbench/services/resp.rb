# frozen_string_literal: true

require "socket"

module Rackbench
  module Services
    # The few commands rackbench sends Redis itself (PING, SAVE, DEBUG
    # RELOAD, INFO), over its own connection in RESP, Redis's wire format:
    # a command is an array of bulk strings; a reply is a simple string
    # (+OK), an error (-ERR ...), an integer (:1) or a bulk string ($5).
    # Any failure raises SetupError naming the command.
    module Resp
      READ_TIMEOUT_S = 60

      module_function

      # Sends one command (Strings) to the Redis at endpoint (Endpoint) on
      # a connection of its own; returns the reply (a String, an Integer,
      # or nil for a null bulk string).
      #
      # :timeout_s :: how long the reply may take (default: 60; SAVE of a large data set takes long)
      def call(endpoint, *command, timeout_s: READ_TIMEOUT_S)
        socket = endpoint.admin_socket
        socket.write(encode(command))
        read_reply(socket, timeout_s, command)
      rescue SystemCallError, IOError, SocketError => e
        raise SetupError, "redis #{command.first}: #{e.message}"
      ensure
        socket&.close
      end

      def encode(command)
        command.map(&:to_s).reduce(+"*#{command.size}\r\n") { |out, arg| out << "$#{arg.bytesize}\r\n#{arg}\r\n" }
      end

      def read_reply(socket, timeout_s, command)
        line = read_line(socket, timeout_s, command)
        case line[0]
        when "+" then line[1..]
        when ":" then Integer(line[1..])
        when "-" then raise SetupError, "redis #{command.first}: #{line[1..]}"
        when "$" then read_bulk(socket, Integer(line[1..]), timeout_s, command)
        else raise SetupError, "redis #{command.first}: unexpected reply #{line[0, 40].inspect}"
        end
      end

      def read_bulk(socket, size, timeout_s, command)
        return nil if size.negative?

        data = +""
        data << read_some(socket, size + 2 - data.bytesize, timeout_s, command) while data.bytesize < size + 2
        data.byteslice(0, size)
      end

      def read_line(socket, timeout_s, command)
        line = +""
        line << read_some(socket, 1, timeout_s, command) until line.end_with?("\r\n")
        line.chomp("\r\n")
      end

      def read_some(socket, max_bytes, timeout_s, command)
        raise SetupError, "redis #{command.first}: no reply within #{timeout_s} s" unless socket.wait_readable(timeout_s)

        socket.readpartial(max_bytes)
      rescue EOFError
        raise SetupError, "redis #{command.first}: the connection closed before the reply"
      end

      private_class_method :encode, :read_reply, :read_bulk, :read_line, :read_some
    end
  end
end
