# frozen_string_literal: true

require "open3"
require "shellwords"
require "socket"
require "uri"

module Rackbench
  # A load host (load.host: ssh://USER@HOST[:PORT][/PATH/TO/rackbench-engine]):
  # the same engine binary on another machine, started through OpenSSH with
  # the user's own ssh configuration and keys (RACKBENCH_SSH_COMMAND
  # replaces "ssh", as GIT_SSH_COMMAND does for git). Its JSON is the
  # contract, read back as from a local engine (RemoteEngine).
  #
  # Before any measurement, #prepare! asks the load host, in one ssh
  # command, which address it sees this host at (OpenSSH's
  # $SSH_CONNECTION: the server listens there, and nowhere else) and which
  # engine it has: a failing ssh, a missing engine or another engine
  # version is one line (SetupError). Before each trial, #round_trip
  # measures the network's round trip to the load host: the time of TCP
  # handshakes with its ssh port (a SYN and its SYN-ACK: one round trip,
  # answered by the kernel, no program's latency in it).
  class RemoteHost
    SCHEME = "ssh"
    DEFAULT_ENGINE = "rackbench-engine"
    SSH_COMMAND_ENV = "RACKBENCH_SSH_COMMAND"
    # ssh never asks (no terminal), and gives up on a host that does not answer.
    SSH_OPTIONS = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"].freeze
    # TCP handshakes timed per round trip measurement: few, each closed
    # with a reset, because each is a connection sshd accepts and forks for,
    # and sshd drops new connections at random beyond 10 that have not
    # authenticated yet (MaxStartups 10:30:100): the engine's own ssh comes
    # next.
    ROUND_TRIP_SAMPLES = 5
    CONNECT_TIMEOUT_S = 5

    # ssh:// URL => [user, host, port, engine path] (port and user may be
    # nil). Raises ArgumentError naming what is wrong.
    def self.parse(url)
      uri = URI.parse(url.to_s)
      raise ArgumentError, "must be ssh://USER@HOST[:PORT][/PATH/TO/rackbench-engine], got #{url.inspect}" \
        unless uri.scheme == SCHEME && !uri.host.to_s.empty? && uri.query.nil? && uri.fragment.nil? && uri.password.nil?

      path = uri.path.to_s
      [uri.user, uri.host, uri.port, path.empty? || path == "/" ? DEFAULT_ENGINE : path]
    rescue URI::InvalidURIError
      raise ArgumentError, "must be ssh://USER@HOST[:PORT][/PATH/TO/rackbench-engine], got #{url.inspect}"
    end

    attr_reader :url, :host, :port, :engine_path
    # What #prepare! learned: the address the load host reaches this host
    # at, and its engine's version line.
    attr_reader :server_address, :engine_version

    # :env :: where RACKBENCH_SSH_COMMAND is read (default: ENV)
    # :local_engine :: this host's engine binary, whose version the load host's must match
    def initialize(url, env: ENV, local_engine: LoadEngine.default_binary)
      @url = url
      @user, @host, @port, @engine_path = self.class.parse(url)
      @ssh = Shellwords.split(env.fetch(SSH_COMMAND_ENV, "").then { |v| v.strip.empty? ? "ssh" : v })
      @local_engine = local_engine
    end

    # The argv of `ssh ... HOST -- COMMAND`, COMMAND the words joined for
    # the remote shell (each quoted: nothing is interpreted there).
    def ssh_argv(*words)
      [*@ssh, *SSH_OPTIONS, *(@port ? ["-p", @port.to_s] : []), destination, "--", Shellwords.join(words)]
    end

    # Asks the load host for this host's address and its engine's version;
    # returns self. SetupError, one line, when ssh fails, the engine is
    # missing or is another version than this host's.
    def prepare!
      script = 'printf "%s\n" "$SSH_CONNECTION"; exec "$0" --version'
      out, err, status = Open3.capture3(*ssh_argv("sh", "-c", script, @engine_path), stdin_data: "")
      reason = err.to_s.lines.map(&:strip).reject(&:empty?).last
      if status.exitstatus == 255
        raise SetupError, "load host #{@url}: ssh failed: #{reason || "exit status 255"}"
      elsif [126, 127].include?(status.exitstatus)
        raise SetupError, "load host #{@url}: no engine at #{@engine_path} there (#{reason || "not found"}): install " \
                          "rackbench on it, or name its engine in load.host (ssh://USER@HOST/PATH/TO/rackbench-engine)"
      elsif !status.success?
        raise SetupError, "load host #{@url}: #{@engine_path} --version failed: #{reason || "exit status #{status.exitstatus}"}"
      end
      connection, version = out.lines.map(&:strip)
      @server_address = connection.to_s.split.first
      raise SetupError, "load host #{@url}: ssh gave no SSH_CONNECTION to learn this host's address from" unless @server_address

      @engine_version = version.to_s
      local = local_version
      if local && @engine_version != local
        raise SetupError, "load host #{@url}: its engine is #{@engine_version.inspect}, this host's #{local.inspect}: " \
                          "run the same rackbench on both"
      end
      self
    end

    # The round trip to the load host, in µs: {"min", "median", "max",
    # "samples"} over ROUND_TRIP_SAMPLES TCP handshakes with its ssh port.
    # SetupError when it cannot be reached.
    def round_trip
      samples = Array.new(ROUND_TRIP_SAMPLES) { handshake_us }.sort
      { "min" => samples.first, "median" => Stats.median(samples).round(1), "max" => samples.last,
        "samples" => samples.size }
    end

    # The record's network document (Trial::Record#network).
    def to_h(round_trip_us)
      { "load_host" => @url, "server_address" => @server_address, "engine_version" => @engine_version,
        "round_trip_us" => round_trip_us }
    end

    # The engine to drive this trial's load with (a RemoteEngine).
    def engine
      RemoteEngine.new(self)
    end

    private

    def destination
      @user ? "#{@user}@#{@host}" : @host
    end

    def local_version
      out, status = Open3.capture2(@local_engine, "--version")
      status.success? ? out.strip : nil
    rescue SystemCallError
      nil
    end

    # One TCP handshake with the load host's ssh port, in µs.
    def handshake_us
      address = Addrinfo.tcp(@host, @port || 22)
      socket = Socket.new(address.afamily, Socket::SOCK_STREAM, 0)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_microsecond)
      begin
        socket.connect_nonblock(address, exception: false)
        raise SetupError, "load host #{@url}: no answer from #{@host}:#{@port || 22}" unless socket.wait_writable(CONNECT_TIMEOUT_S)

        socket.connect_nonblock(address) # raises the connect's error, if any
      rescue Errno::EISCONN
        nil
      end
      (Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_microsecond) - started).round(1)
    rescue SystemCallError, SocketError => e
      raise SetupError, "load host #{@url}: cannot reach #{@host}:#{@port || 22}: #{e.message}"
    ensure
      close_with_reset(socket)
    end

    # Closes with a RST (SO_LINGER 0), so the sshd child that accepted the
    # connection sees it gone at once instead of waiting for a banner.
    def close_with_reset(socket)
      return unless socket

      socket.setsockopt(Socket::SOL_SOCKET, Socket::SO_LINGER, [1, 0].pack("ii"))
    rescue SystemCallError
      nil
    ensure
      socket.close
    end
  end
end
