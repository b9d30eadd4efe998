# frozen_string_literal: true

require_relative "../servers"

module Rackbench
  module Servers
    # Thin: one EventMachine reactor. With threads > 1 the app is called on
    # EventMachine's thread pool (Thin's --threaded mode, which it still
    # calls experimental). Thin's cluster mode starts separate servers on
    # consecutive ports, which one load target cannot spread over, so
    # processes must be 1. Thin keeps at most 100 keep-alive connections
    # open by default (--max-persistent-conns); rackbench keeps its defaults
    # unless the experiment sets options.
    #
    #   thin start --address 127.0.0.1 --port PORT --environment ENV
    #              --rackup CONFIG_RU [--threaded --threadpool-size T] [option flags]
    #              [--ssl --ssl-key-file KEY --ssl-cert-file CERT --ssl-disable-verify]
    #
    # With load.tls Thin terminates TLS itself through EventMachine's
    # start_tls (OpenSSL), over HTTP/1.1 only; it asks no client
    # certificate (--ssl-disable-verify).
    class Thin < Adapter
      Option = ServerOptions::Option
      OPTIONS = ServerOptions::Schema.new(
        Option.new(key: "timeout", type: ServerOptions.integer(min: 0), default: "30",
                   effect: "seconds a connection may stay inactive before Thin closes it; 0: never",
                   reaches: "`--timeout N`"),
        Option.new(key: "max_conns", type: ServerOptions.integer(min: 1), default: "1024",
                   effect: "most open connections (EventMachine's descriptor table; Thin logs the size " \
                           "it really got, which the open-files limit can lower)",
                   reaches: "`--max-conns N`"),
        Option.new(key: "max_persistent_conns", type: ServerOptions.integer(min: 0), default: "100",
                   effect: "most keep-alive connections at once; beyond it Thin closes each connection " \
                           "after its response",
                   reaches: "`--max-persistent-conns N`"),
        Option.new(key: "no_epoll", type: ServerOptions::BOOLEAN, default: "false (epoll)",
                   effect: "true: EventMachine polls with select(2) instead of epoll(7)",
                   reaches: "`--no-epoll`; false: no flag")
      )
      FLAGS = { "timeout" => "--timeout", "max_conns" => "--max-conns",
                "max_persistent_conns" => "--max-persistent-conns" }.freeze

      def name = "thin"

      def server_gem = "thin"

      def option_schema = OPTIONS

      # Thin 2.x accepts Rack 3 (1.8 wanted Rack < 3); Bundler picks the
      # release that matches the app's Rack.
      def gem_lines(_ruby_engine)
        ['gem "thin"']
      end

      def supports
        "processes 1, threads >= 1 (1: event loop only; T: --threaded with a pool of T); CRuby only"
      end

      def command(config_ru:, port:, threads:, options: {}, environment: DEFAULT_ENVIRONMENT, host: HOST, tls: nil, **)
        values = option_values(options)
        argv = ["thin", "start", "--address", host, "--port", Integer(port).to_s,
                "--environment", environment_name(environment), "--rackup", config_ru.to_s]
        argv += ["--threaded", "--threadpool-size", threads.to_s] if threads > 1
        argv += ["--ssl", "--ssl-key-file", tls.key_path, "--ssl-cert-file", tls.cert_path, "--ssl-disable-verify"] if tls
        argv + values.flat_map { |key, value| option_flags(key, value) }
      end

      def tls? = true

      private

      def websocket_refusal = "its EventMachine handler hands an app no socket to take over, no rack.hijack"

      def own_limits(processes:, ruby_engine:, **)
        return no_jruby(ruby_engine) if jruby?(ruby_engine)

        "thin serves one process per port (its cluster mode uses several ports): processes must be 1" if processes > 1
      end

      def option_flags(key, value)
        return value ? ["--no-epoll"] : [] if key == "no_epoll"

        [FLAGS.fetch(key), Integer(value).to_s]
      end
    end

    register :thin, Thin.new
  end
end
