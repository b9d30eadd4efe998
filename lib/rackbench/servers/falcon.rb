# frozen_string_literal: true

require "fileutils"
require_relative "../servers"

module Rackbench
  module Servers
    # Falcon: an event loop (reactor) per thread, serving every request on a
    # fiber of its own, so one reactor already handles many requests at
    # once. A controller process supervises P forked children.
    #
    # rackbench's "threads" are reactor threads per process:
    #
    #   threads 1:  falcon serve --bind http://127.0.0.1:PORT --config CONFIG_RU
    #                            --forked --count P
    #   threads T:  ... --hybrid --forks P --threads T
    #
    # `falcon serve` is what Falcon's README benchmarks with; it adds no
    # response cache unless --cache is given. It has no environment flag:
    # the app sees RACK_ENV from the environment only. Options become flags:
    #
    #   ... [--cache] [--timeout S] [--preload PATH]
    #
    # With load.tls the bind is https://127.0.0.1:PORT. Falcon takes its
    # certificate from the localhost gem, which reads HOST.crt/HOST.key and
    # their issuer development.crt/development.key from
    # $XDG_STATE_HOME/localhost.rb/ (and would make its own there): the
    # trial's certificate is put there, in the trial's directory, and
    # XDG_STATE_HOME points the server at it. Its ALPN prefers h2.
    class Falcon < Adapter
      Option = ServerOptions::Option
      OPTIONS = ServerOptions::Schema.new(
        Option.new(key: "cache", type: ServerOptions::BOOLEAN, default: "false",
                   effect: "true: Falcon's HTTP response cache answers cacheable GET/HEAD responses " \
                           "(x-cache header) without calling the app again",
                   reaches: "`--cache`; false: no flag"),
        Option.new(key: "timeout", type: ServerOptions.number(min: 0.1), default: "none",
                   effect: "seconds Falcon waits on a connection's read or write before giving up: an " \
                           "idle keep-alive connection is closed after it",
                   reaches: "`--timeout S`"),
        Option.new(key: "preload", type: ServerOptions::STRING, default: "none",
                   effect: "a Ruby file (relative to the app's directory) the controller loads before " \
                           "forking, so the children share what it loaded",
                   reaches: "`--preload PATH`")
      )

      def name = "falcon"

      def server_gem = "falcon"

      def option_schema = OPTIONS

      def gem_lines(_ruby_engine)
        ['gem "falcon"']
      end

      def supports
        "processes >= 1 (controller + N children), threads >= 1 (reactor threads per process, " \
          "each serving requests on fibers); CRuby only; HTTP/1.1 and h2c"
      end

      # Where the localhost gem finds the certificate, under XDG_STATE_HOME.
      LOCALHOST_GEM_DIR = "localhost.rb"
      TLS_STATE_DIR = "falcon-tls"

      def command(config_ru:, port:, processes:, threads:, options: {}, host: HOST, tls: nil, **)
        values = option_values(options)
        argv = ["falcon", "serve", "--bind", "#{tls ? "https" : "http"}://#{bind_address(port, host)}",
                "--config", config_ru.to_s]
        argv += if threads == 1
                  ["--forked", "--count", processes.to_s]
                else
                  ["--hybrid", "--forks", processes.to_s, "--threads", threads.to_s]
                end
        argv + option_flags(values)
      end

      def worker_processes(processes)
        processes + 1
      end

      # Falcon's http:// endpoint (async-http's Protocol::HTTP) reads the
      # first bytes of each connection and serves HTTP/2 when they are the
      # HTTP/2 preface: h2c with prior knowledge on the same port, checked
      # with h2load and the engine (test/integration/load_engine_h2_test.rb).
      def protocols
        %w[http1 h2c].freeze
      end

      def tls? = true

      # async-websocket's Rack adapter, on Falcon's own fibers.
      def websocket = "async-websocket"

      # Its https:// endpoint chooses h2 by ALPN when offered (Falcon::Endpoint).
      def tls_protocols
        %w[http1 h2].freeze
      end

      # The trial's certificate where the localhost gem looks for
      # 127.0.0.1's (and its issuer), in the trial's directory.
      def tls_env(tls, work_dir)
        state = File.join(File.expand_path(work_dir), TLS_STATE_DIR)
        dir = File.join(state, LOCALHOST_GEM_DIR)
        FileUtils.mkdir_p(dir, mode: 0o700)
        { "#{HOST}.crt" => tls.cert_path, "#{HOST}.key" => tls.key_path,
          "development.crt" => tls.ca_path, "development.key" => tls.ca_key_path }.each do |name, source|
          FileUtils.cp(source, File.join(dir, name))
        end
        { "XDG_STATE_HOME" => state }
      end

      private

      def own_limits(ruby_engine:, **)
        no_jruby(ruby_engine)
      end

      def option_flags(values)
        values.flat_map do |key, value|
          case key
          when "cache" then value ? ["--cache"] : []
          when "timeout" then ["--timeout", value.to_s]
          when "preload" then ["--preload", value]
          end
        end
      end
    end

    register :falcon, Falcon.new
  end
end
