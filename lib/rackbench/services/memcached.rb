# frozen_string_literal: true

module Rackbench
  module Services
    # memcached from Debian's package, on 127.0.0.1 and a free port (or
    # `port:`), without UDP. A cache holds nothing to keep: its "template"
    # is empty, and restoring it is flush_all before each trial, so no
    # trial reads what an earlier one cached. Its state is that it was
    # flushed.
    class Memcached < Kind
      # memcached's own options that `settings:` may give, each a whole
      # number: memory for items (-m), worker threads (-t), connections (-c).
      SETTINGS = { "memory_mb" => "-m", "threads" => "-t", "connections" => "-c" }.freeze
      REPLY_TIMEOUT_S = 10

      def name = "memcached"
      def title = "memcached"
      def package = "memcached"
      def account_name = "memcache"
      def default_env = "MEMCACHE_SERVERS"

      def programs
        { server: "memcached" }
      end

      def setting_problem(key, value)
        unless SETTINGS.key?(key)
          return "unknown setting for memcached; known: #{SETTINGS.keys.join(", ")} (memcached -m, -t, -c)"
        end

        value.is_a?(Integer) && value.positive? ? nil : "must be a whole number >= 1"
      end

      def setting_value(value)
        value.to_s
      end

      def version_flag = "-V"
      def version_pattern = /memcached\s+(\S+)/

      def prepare(dir:, account:, log:, timeout_s: nil); end

      # Always TCP: the port given, else a free one.
      def endpoint(dir:, port:) # rubocop:disable Lint/UnusedMethodArgument
        Endpoint.new(socket: nil, port: port || Ports.free_port, tcp: true)
      end

      def argv(dir:, endpoint:, settings:) # rubocop:disable Lint/UnusedMethodArgument
        [paths.fetch(:server), "-l", Ports::LOCALHOST, "-p", endpoint.port.to_s, "-U", "0",
         *settings.flat_map { |key, value| [SETTINGS.fetch(key), value] }]
      end

      def ready?(endpoint)
        command(endpoint, "version").start_with?("VERSION ")
      rescue SetupError
        false
      end

      def after_ready(_endpoint); end

      def url(endpoint)
        "#{Ports::LOCALHOST}:#{endpoint.port}"
      end

      def keep_template(_endpoint)
        { "flushed" => true }
      end

      def restore(endpoint)
        reply = command(endpoint, "flush_all")
        raise SetupError, "memcached flush_all answered #{reply.inspect}" unless reply == "OK"

        { "flushed" => true }
      end

      private

      # One line of memcached's text protocol and its one-line reply.
      def command(endpoint, line)
        socket = endpoint.admin_socket
        socket.write("#{line}\r\n")
        raise SetupError, "memcached #{line}: no reply within #{REPLY_TIMEOUT_S} s" unless socket.wait_readable(REPLY_TIMEOUT_S)

        socket.gets.to_s.chomp
      rescue SystemCallError, IOError => e
        raise SetupError, "memcached #{line}: #{e.message}"
      ensure
        socket&.close
      end
    end

    register("memcached", position: 3) { Memcached.new }
  end
end
