# frozen_string_literal: true

require_relative "../servers"

module Rackbench
  module Servers
    # Thin: one EventMachine reactor. With threads > 1 the app is called on
    # EventMachine's thread pool (Thin's --threaded mode, which it still
    # calls experimental). Thin's cluster mode starts separate servers on
    # consecutive ports, which one load target cannot spread over, so
    # processes must be 1. Thin keeps at most 100 keep-alive connections
    # open by default (--max-persistent-conns); rackbench keeps its defaults.
    #
    #   thin start --address 127.0.0.1 --port PORT --environment production
    #              --rackup CONFIG_RU [--threaded --threadpool-size T]
    class Thin < Adapter
      def name = "thin"

      # Thin 2.x accepts Rack 3 (1.8 wanted Rack < 3); Bundler picks the
      # release that matches the app's Rack.
      def gem_lines(_ruby_engine)
        ['gem "thin"']
      end

      def supports
        "processes 1, threads >= 1 (1: event loop only; T: --threaded with a pool of T); CRuby only"
      end

      def command(config_ru:, port:, threads:, **)
        argv = ["thin", "start", "--address", HOST, "--port", Integer(port).to_s,
                "--environment", "production", "--rackup", config_ru.to_s]
        argv += ["--threaded", "--threadpool-size", threads.to_s] if threads > 1
        argv
      end

      private

      def own_limits(processes:, ruby_engine:, **)
        return no_jruby(ruby_engine) if jruby?(ruby_engine)

        "thin serves one process per port (its cluster mode uses several ports): processes must be 1" if processes > 1
      end
    end

    register :thin, Thin.new
  end
end
