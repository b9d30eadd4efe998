# frozen_string_literal: true

require_relative "../servers"

module Rackbench
  module Servers
    # Puma: a thread pool per process; with processes > 1 a cluster of one
    # master and N forked workers (Puma 7+ preloads the app before forking by
    # default, so workers share its pages copy-on-write). JRuby runs Puma's
    # Java variant in single mode only: JRuby cannot fork.
    #
    #   puma --config - --environment production --bind tcp://127.0.0.1:PORT
    #        --threads T:T --workers P|0 CONFIG_RU
    class Puma < Adapter
      # Puma logs this once per worker that has loaded the app (5.x-8.x:
      # "- Worker 0 (PID: 123) booted in 0.01s, phase: 0"; 4.x spelt "pid").
      WORKER_BOOTED = /Worker \d+ \(PID: \d+\) booted/i
      SINGLE_READY = /Use Ctrl-C to stop/

      def name = "puma"

      def gem_lines(_ruby_engine)
        ['gem "puma"']
      end

      def supports
        "processes >= 1 (cluster: 1 master + N workers), threads >= 1; CRuby and JRuby (JRuby: processes 1)"
      end

      def command(config_ru:, port:, processes:, threads:, **)
        # "--config -" loads no config file, so an app's config/puma.rb cannot
        # override the trial's settings (the same as --no-config, which only
        # Puma 5.5+ knows). Threads are fixed (min = max) so the pool does
        # not grow during the measurement. "--workers 0" is explicit because
        # Puma otherwise reads WEB_CONCURRENCY from the environment.
        ["puma", "--config", "-", "--environment", "production",
         "--bind", "tcp://#{bind_address(port)}", "--threads", "#{threads}:#{threads}",
         "--workers", cluster?(processes) ? processes.to_s : "0", config_ru.to_s]
      end

      def worker_processes(processes)
        cluster?(processes) ? processes + 1 : 1
      end

      # Single mode logs "Use Ctrl-C to stop" once it serves; a cluster logs
      # one line per booted worker.
      def ready_log(processes)
        cluster?(processes) ? [WORKER_BOOTED, processes] : [SINGLE_READY, 1]
      end

      private

      def cluster?(processes)
        processes > 1
      end

      def own_limits(processes:, ruby_engine:, **)
        "puma on JRuby cannot fork workers: processes must be 1" if jruby?(ruby_engine) && processes > 1
      end
    end

    register :puma, Puma.new
  end
end
