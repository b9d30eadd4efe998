# frozen_string_literal: true

require_relative "../servers"

module Rackbench
  module Servers
    # Iodine: a C event loop (facil.io) calling the app on T threads per
    # process; with processes > 1 a root process forks P workers.
    #
    #   iodine -b 127.0.0.1 -p PORT -w P -t T [option flags] CONFIG_RU
    #
    # Iodine has no environment flag and no preload option: its root
    # process always loads the app before forking the workers.
    class Iodine < Adapter
      Option = ServerOptions::Option
      OPTIONS = ServerOptions::Schema.new(
        Option.new(key: "keep_alive", type: ServerOptions.integer(min: 1, max: 255), default: "40",
                   effect: "seconds an idle keep-alive connection stays open",
                   reaches: "`-k N -ping 40` (see below)"),
        Option.new(key: "max_body", type: ServerOptions.integer(min: 1), default: "50",
                   effect: "largest request body in megabytes; a larger upload is refused (413)",
                   reaches: "`-maxbd N`"),
        Option.new(key: "max_header", type: ServerOptions.integer(min: 1), default: "32",
                   effect: "largest request header in kilobytes; a request with more is refused (413; " \
                           "a single header line above 8 KB is refused whatever this says)",
                   reaches: "`-maxhd N`"),
        Option.new(key: "log", type: ServerOptions::BOOLEAN, default: "false",
                   effect: "true: Iodine logs every request (costs throughput)",
                   reaches: "`-v`; false: no flag")
      )
      FLAGS = { "keep_alive" => "-k", "max_body" => "-maxbd", "max_header" => "-maxhd" }.freeze
      # Iodine 0.7 applies -k only when -ping is given too: its listen code
      # checks the type of the ping value where it means the timeout's, and
      # otherwise keeps 40 s without a word. So keep_alive also passes
      # -ping with Iodine's own default WebSocket ping interval, which
      # changes nothing else.
      DEFAULT_PING_S = 40

      def name = "iodine"

      def server_gem = "iodine"

      def option_schema = OPTIONS

      # Its native WebSocket (the Rack upgrade spec: env["rack.upgrade?"]).
      def websocket = "rack.upgrade"

      def gem_lines(_ruby_engine)
        ['gem "iodine"']
      end

      def supports
        "processes >= 1 (root + N workers), threads >= 1; CRuby only"
      end

      # Positive counts only: iodine reads negative ones as fractions of
      # the CPU cores, and 0 as "choose for me".
      def command(config_ru:, port:, processes:, threads:, options: {}, host: HOST, **)
        flags = option_values(options).flat_map { |key, value| option_flags(key, value) }
        ["iodine", "-b", host, "-p", Integer(port).to_s,
         "-w", processes.to_s, "-t", threads.to_s, *flags, config_ru.to_s]
      end

      def worker_processes(processes)
        processes > 1 ? processes + 1 : 1
      end

      private

      def own_limits(ruby_engine:, **)
        no_jruby(ruby_engine)
      end

      def option_flags(key, value)
        return value ? ["-v"] : [] if key == "log"

        flags = [FLAGS.fetch(key), Integer(value).to_s]
        key == "keep_alive" ? flags + ["-ping", DEFAULT_PING_S.to_s] : flags
      end
    end

    register :iodine, Iodine.new
  end
end
