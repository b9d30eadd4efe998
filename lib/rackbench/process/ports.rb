# frozen_string_literal: true

require "socket"

module Rackbench
  # TCP ports for benchmark servers, on the loopback address only.
  module Ports
    LOCALHOST = "127.0.0.1"
    LISTEN_STATE = "0A"

    module_function

    # A port that is free right now: the kernel's choice for a socket bound
    # to port 0. Another process may take it before the server binds it;
    # ServerProcess#start checks again, and a server that cannot bind exits,
    # which readiness reports.
    #
    # :host :: the address to bind (default: 127.0.0.1)
    def free_port(host: LOCALHOST)
      server = TCPServer.new(host, 0)
      server.addr[1]
    ensure
      server&.close
    end

    # True when a socket listens on port. On Linux this reads the kernel's
    # socket tables (/proc/net/tcp, tcp6) and counts a listener on any
    # address (the conservative answer); connections a stopped server left
    # in TIME_WAIT do not count, since no process holds them. Elsewhere it
    # tries to bind host:port with SO_REUSEADDR, as servers do.
    #
    # :host :: the address to check (default: 127.0.0.1)
    # :proc_dir :: where /proc is (default: "/proc")
    def in_use?(port, host: LOCALHOST, proc_dir: "/proc")
      tables = %w[tcp tcp6].map { |name| File.join(proc_dir, "net", name) }.select { |path| File.readable?(path) }
      return bind_fails?(port, host) if tables.empty?

      tables.any? { |path| listeners(File.read(path), Integer(port)).any? }
    end

    # The inodes of the LISTEN sockets on port in one /proc/net/tcp table
    # (columns: sl local_address rem_address st ... inode; addresses are
    # hex "ADDR:PORT"; state 0A is LISTEN; the inode is column 10).
    def listeners(table, port)
      table.each_line.drop(1).filter_map do |line|
        fields = line.split
        Integer(fields[9]) if fields[3] == LISTEN_STATE && fields[1].split(":").last.to_i(16) == port
      end
    end

    private_class_method :listeners

    # The inodes of the sockets listening on port in this network
    # namespace (Linux: /proc/net/tcp and tcp6, column 10), on any address;
    # nil where no table can be read (not Linux: nothing to tell).
    #
    # :proc_dir :: where /proc is (default: "/proc")
    def listener_inodes(port, proc_dir: "/proc")
      tables = %w[tcp tcp6].map { |name| File.join(proc_dir, "net", name) }.select { |path| File.readable?(path) }
      return nil if tables.empty?

      tables.flat_map { |path| listeners(File.read(path), Integer(port)) }
    rescue SystemCallError
      nil
    end

    # Whether one of +pids+ holds a socket of +inodes+ (their
    # /proc/PID/fd links read "socket:[INODE]").
    #
    # :proc_dir :: where /proc is (default: "/proc")
    def held_by?(inodes, pids, proc_dir: "/proc")
      links = inodes.to_h { |inode| ["socket:[#{inode}]", true] }
      pids.any? do |pid|
        Dir.children(File.join(proc_dir, pid.to_s, "fd")).any? do |fd|
          links.key?(File.readlink(File.join(proc_dir, pid.to_s, "fd", fd)))
        rescue SystemCallError
          false
        end
      rescue SystemCallError
        false
      end
    end

    def bind_fails?(port, host)
      socket = Socket.new(:INET, :STREAM)
      socket.setsockopt(:SOCKET, :REUSEADDR, true)
      socket.bind(Addrinfo.tcp(host, Integer(port)))
      false
    rescue Errno::EADDRINUSE
      true
    ensure
      socket&.close
    end
    private_class_method :bind_fails?

    # Waits until port is free; returns true when it is, false when it is
    # still in use after timeout_s.
    #
    # :timeout_s :: how long to wait
    # :host :: the address to check (default: 127.0.0.1)
    # :interval_s :: time between checks (default: 0.02)
    # :proc_dir :: where /proc is (default: "/proc")
    def wait_free(port, timeout_s:, host: LOCALHOST, interval_s: 0.02, proc_dir: "/proc")
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
      loop do
        return true unless in_use?(port, host: host, proc_dir: proc_dir)
        return false if Process.clock_gettime(Process::CLOCK_MONOTONIC) >= deadline

        sleep interval_s
      end
    end
  end
end
