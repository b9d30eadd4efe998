# frozen_string_literal: true

require_relative "../servers"

module Rackbench
  module Servers
    # Iodine: a C event loop (facil.io) calling the app on T threads per
    # process; with processes > 1 a root process forks P workers.
    #
    #   iodine -b 127.0.0.1 -p PORT -w P -t T CONFIG_RU
    class Iodine < Adapter
      def name = "iodine"

      def gem_lines(_ruby_engine)
        ['gem "iodine"']
      end

      def supports
        "processes >= 1 (root + N workers), threads >= 1; CRuby only"
      end

      # Positive counts only: iodine reads negative ones as fractions of
      # the CPU cores, and 0 as "choose for me".
      def command(config_ru:, port:, processes:, threads:, **)
        ["iodine", "-b", HOST, "-p", Integer(port).to_s,
         "-w", processes.to_s, "-t", threads.to_s, config_ru.to_s]
      end

      def worker_processes(processes)
        processes > 1 ? processes + 1 : 1
      end

      private

      def own_limits(ruby_engine:, **)
        no_jruby(ruby_engine)
      end
    end

    register :iodine, Iodine.new
  end
end
