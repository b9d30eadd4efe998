# frozen_string_literal: true

require "uri"
require_relative "../servers"

module Rackbench
  module Servers
    # Puma: a thread pool per process; with processes > 1 a cluster of one
    # master and N forked workers (Puma 7+ preloads the app before forking by
    # default, so workers share its pages copy-on-write). JRuby runs Puma's
    # Java variant in single mode only: JRuby cannot fork.
    #
    #   puma --config WORK_DIR/puma.rb --environment ENV
    #        --bind tcp://127.0.0.1:PORT[?backlog=N] --threads T:T --workers P|0 CONFIG_RU
    #
    # WORK_DIR/puma.rb holds the trial's options as Puma DSL lines. With
    # load.tls the bind is Puma's ssl_bind (its MiniSSL, on OpenSSL):
    #
    #        --bind ssl://127.0.0.1:PORT?key=KEY&cert=CERT&verify_mode=none[&backlog=N]
    class Puma < Adapter
      # Puma logs this once per worker that has loaded the app (5.x-8.x:
      # "- Worker 0 (PID: 123) booted in 0.01s, phase: 0"; 4.x spelt "pid").
      WORKER_BOOTED = /Worker \d+ \(PID: \d+\) booted/i
      SINGLE_READY = /Use Ctrl-C to stop/
      CONFIG_FILE = "puma.rb"

      Option = ServerOptions::Option
      OPTIONS = ServerOptions::Schema.new(
        Option.new(key: "preload", type: ServerOptions::BOOLEAN,
                   default: "Puma's: on in cluster mode since Puma 7 (off before)",
                   effect: "true: the master loads the app once and forks workers that share its pages; " \
                           "false: every worker loads the app itself. Cluster mode only",
                   reaches: "`preload_app! true` / `preload_app! false` (config)"),
        Option.new(key: "fork_worker", type: ServerOptions.either(ServerOptions::BOOLEAN, ServerOptions.integer(min: 0)),
                   default: "off",
                   effect: "workers 1..N are forked from worker 0, not the master; true reforks after " \
                           "Puma's default of 1000 requests, N after N requests, 0 never. Cluster mode only",
                   reaches: "`fork_worker` / `fork_worker N` (config); false: no line"),
        Option.new(key: "queue_requests", type: ServerOptions::BOOLEAN, default: "true",
                   effect: "false: a worker accepts only as many connections as it has threads, and " \
                           "Puma closes every connection after its response (no keep-alive)",
                   reaches: "`queue_requests true/false` (config)"),
        Option.new(key: "wait_for_less_busy_worker", type: ServerOptions.number(min: 0), default: "0.005",
                   effect: "seconds a busy worker waits before accepting, so an idle one takes the " \
                           "connection; 0 turns it off. Cluster mode only",
                   reaches: "`wait_for_less_busy_worker S` (config)"),
        Option.new(key: "max_keep_alive", type: ServerOptions.integer(min: 1), default: "999 (Puma 7+)",
                   effect: "requests served on one keep-alive connection before Puma closes it (Puma 7+; " \
                           "older Puma refuses the line at boot)",
                   reaches: "`max_keep_alive N` (config)"),
        Option.new(key: "enable_keep_alives", type: ServerOptions::BOOLEAN, default: "true",
                   effect: "false: Puma closes every connection after its response (Puma 6.5+)",
                   reaches: "`enable_keep_alives true/false` (config)"),
        Option.new(key: "persistent_timeout", type: ServerOptions.integer(min: 1), default: "65 (Puma 7+; 20 before)",
                   effect: "seconds an idle keep-alive connection stays open",
                   reaches: "`persistent_timeout N` (config)"),
        Option.new(key: "backlog", type: ServerOptions.integer(min: 1), default: "1024",
                   effect: "the listen socket's backlog (the kernel caps it at net.core.somaxconn)",
                   reaches: "`--bind tcp://127.0.0.1:PORT?backlog=N`"),
        ServerOptions.gc_compact_before_fork(hook: "`before_fork { GC.compact }` (config): in the master, once, " \
                                                   "before it forks the workers. Cluster mode only, not with fork_worker")
      )
      # Options that mean something only with workers to fork.
      CLUSTER_ONLY = %w[preload fork_worker wait_for_less_busy_worker gc_compact_before_fork].freeze

      def name = "puma"

      def server_gem = "puma"

      def option_schema = OPTIONS

      def gem_lines(_ruby_engine)
        ['gem "puma"']
      end

      def supports
        "processes >= 1 (cluster: 1 master + N workers), threads >= 1; CRuby and JRuby (JRuby: processes 1)"
      end

      # The generated config file (even without options) replaces the
      # former "--config -": Puma loads that file only, so an app's
      # config/puma.rb cannot override the trial's settings, and an option
      # can be turned off (Puma has no --no-preload flag). Command-line flags
      # win over the file; they carry the trial's shape, the file its
      # options. Threads are fixed (min = max) so the pool does not grow
      # during the measurement. "--workers 0" is explicit because Puma
      # otherwise reads WEB_CONCURRENCY from the environment.
      def command(config_ru:, port:, processes:, threads:, work_dir:, options: {}, environment: DEFAULT_ENVIRONMENT,
                  host: HOST, tls: nil, **)
        values = option_values(options)
        config = write_work_file(work_dir, CONFIG_FILE, config_text(values))
        bind = tls ? ssl_bind(port, tls, host) : "tcp://#{bind_address(port, host)}"
        bind += "#{tls ? "&" : "?"}backlog=#{Integer(values["backlog"])}" if values.key?("backlog")
        ["puma", "--config", config, "--environment", environment_name(environment),
         "--bind", bind, "--threads", "#{threads}:#{threads}",
         "--workers", cluster?(processes) ? processes.to_s : "0", config_ru.to_s]
      end

      def worker_processes(processes)
        cluster?(processes) ? processes + 1 : 1
      end

      # Puma terminates TLS itself (ssl_bind); HTTP/1.1 only.
      def tls? = true

      # Its full hijack (rack.hijack): the app takes the socket over.
      def websocket = "rack.hijack"

      # Single mode logs "Use Ctrl-C to stop" once it serves; a cluster logs
      # one line per booted worker.
      def ready_log(processes)
        cluster?(processes) ? [WORKER_BOOTED, processes] : [SINGLE_READY, 1]
      end

      private

      # Puma decodes the query's values: paths are encoded as form values.
      def ssl_bind(port, tls, host)
        query = URI.encode_www_form([["key", tls.key_path], ["cert", tls.cert_path], ["verify_mode", "none"]])
        "ssl://#{bind_address(port, host)}?#{query}"
      end

      def cluster?(processes)
        processes > 1
      end

      # Values reach the file through #inspect only.
      def config_text(values)
        lines = values.filter_map { |key, value| config_line(key, value) }
        "# Generated by rackbench for one trial: the experiment's server options (doc/servers.md).\n" +
          lines.map { |line| "#{line}\n" }.join
      end

      def config_line(key, value)
        case key
        when "preload" then "preload_app! #{value.inspect}"
        when "fork_worker" then fork_worker_line(value)
        when "backlog" then nil # part of --bind
        when ServerOptions::GC_COMPACT_BEFORE_FORK then ("before_fork { GC.compact }" if value)
        else "#{key} #{value.inspect}" # the other keys are Puma's DSL method names
        end
      end

      # Puma's fork_worker has no "off" form: off is the absence of the line.
      def fork_worker_line(value)
        case value
        when true then "fork_worker"
        when Integer then "fork_worker #{value.inspect}"
        end
      end

      def own_limits(processes:, ruby_engine:, options:, **)
        return "puma on JRuby cannot fork workers: processes must be 1" if jruby?(ruby_engine) && processes > 1

        # With fork_worker, workers 1..N are forked from worker 0, where
        # Puma's before_fork (the master's hook) never runs.
        if options["gc_compact_before_fork"] && options["fork_worker"]
          return "puma: gc_compact_before_fork compacts the master before it forks, but with fork_worker the " \
                 "workers are forked from worker 0: use one or the other"
        end

        cluster_only = CLUSTER_ONLY & options.keys
        return if cluster?(processes) || cluster_only.empty?

        "puma runs in single mode with processes 1: #{cluster_only.join(", ")} applies to cluster mode only " \
          "(processes > 1)"
      end
    end

    register :puma, Puma.new
  end
end
