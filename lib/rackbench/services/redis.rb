# frozen_string_literal: true

module Rackbench
  module Services
    # Redis from Debian's redis-server, on a unix socket in the service's
    # directory (or 127.0.0.1:port with `port:`), with no snapshots or
    # append-only file of its own: nothing forks a background save in a
    # measured window. The template is an RDB snapshot (SAVE, into
    # template.rdb, the server's dbfilename); restoring reloads it (DEBUG
    # RELOAD NOSAVE, allowed from local connections only). Its state is the
    # number of keys. The process title is left alone (set-proc-title no):
    # Redis would otherwise write it over the environment that carries the
    # run's marker, and the watchdog would not find it.
    class Redis < Kind
      SOCKET = "redis.sock"
      SNAPSHOT = "template.rdb"
      # rackbench's own: where it listens and keeps its data, its process
      # title, snapshots and the commands it restores with.
      RESERVED = %w[port bind unixsocket unixsocketperm dir dbfilename save appendonly daemonize set-proc-title
                    enable-debug-command logfile pidfile supervised include].freeze
      SETTING = /\A[a-z][a-z0-9-]*\z/
      PING_TIMEOUT_S = 2

      def name = "redis"
      def title = "Redis"
      def package = "redis-server"
      def account_name = "redis"
      def default_env = "REDIS_URL"

      def programs
        { server: "redis-server" }
      end

      def example_setting = "maxmemory or io-threads"

      def setting_problem(key, value)
        key_problem(key, SETTING, RESERVED) ||
          ([String, Integer, true, false].any? { |t| t === value } ? nil : "must be a string, number or true/false") # rubocop:disable Style/CaseEquality
      end

      def setting_value(value)
        { true => "yes", false => "no" }.fetch(value, value.to_s)
      end

      def version_flag = "--version"
      def version_pattern = /v=(\S+)/

      def prepare(dir:, account:, log:, timeout_s: nil); end

      def endpoint(dir:, port:)
        Endpoint.new(socket: File.join(dir, SOCKET), port: port, tcp: !port.nil?)
      end

      def argv(dir:, endpoint:, settings:)
        listen = endpoint.tcp? ? ["--port", endpoint.port.to_s, "--bind", Ports::LOCALHOST] : ["--port", "0"]
        [paths.fetch(:server), *listen, "--unixsocket", endpoint.socket, "--unixsocketperm", "700", "--dir", dir,
         "--dbfilename", SNAPSHOT, "--save", "", "--appendonly", "no", "--set-proc-title", "no",
         "--enable-debug-command", "local", "--daemonize", "no", "--logfile", "",
         *settings.flat_map { |key, value| ["--#{key}", value] }]
      end

      def ready?(endpoint)
        Resp.call(endpoint, "PING", timeout_s: PING_TIMEOUT_S) == "PONG"
      rescue SetupError
        false
      end

      def after_ready(_endpoint); end

      def url(endpoint)
        endpoint.tcp? ? "redis://#{Ports::LOCALHOST}:#{endpoint.port}/0" : "unix://#{endpoint.socket}"
      end

      def keep_template(endpoint)
        Resp.call(endpoint, "SAVE")
        state(endpoint)
      end

      def restore(endpoint)
        Resp.call(endpoint, "DEBUG", "RELOAD", "NOSAVE")
        state(endpoint)
      end

      # { "keys" => the keys of every database } (INFO keyspace:
      # "db0:keys=12,expires=0,avg_ttl=0").
      def state(endpoint)
        info = Resp.call(endpoint, "INFO", "keyspace").to_s
        { "keys" => info.scan(/^db\d+:keys=(\d+)/).sum { |(count)| count.to_i } }
      end
    end

    register("redis", position: 2) { Redis.new }
  end
end
