# frozen_string_literal: true

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

      def command(config_ru:, port:, processes:, threads:, options: {}, host: HOST, **)
        values = option_values(options)
        argv = ["falcon", "serve", "--bind", "http://#{bind_address(port, host)}", "--config", config_ru.to_s]
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
