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
    # response cache unless --cache is given.
    class Falcon < Adapter
      def name = "falcon"

      def gem_lines(_ruby_engine)
        ['gem "falcon"']
      end

      def supports
        "processes >= 1 (controller + N children), threads >= 1 (reactor threads per process, " \
          "each serving requests on fibers); CRuby only"
      end

      def command(config_ru:, port:, processes:, threads:, **)
        argv = ["falcon", "serve", "--bind", "http://#{bind_address(port)}", "--config", config_ru.to_s]
        if threads == 1
          argv + ["--forked", "--count", processes.to_s]
        else
          argv + ["--hybrid", "--forks", processes.to_s, "--threads", threads.to_s]
        end
      end

      def worker_processes(processes)
        processes + 1
      end

      private

      def own_limits(ruby_engine:, **)
        no_jruby(ruby_engine)
      end
    end

    register :falcon, Falcon.new
  end
end
