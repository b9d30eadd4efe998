# frozen_string_literal: true

require "json"
require_relative "../servers"

module Rackbench
  module Servers
    # Phusion Passenger Standalone, open-source edition, with its builtin
    # engine (no Nginx): Passenger's C++ core accepts the connections and
    # hands each request to one of P single-threaded app processes, which it
    # spawns itself (smart spawning: forked from a preloader that loaded
    # the app once).
    #
    #   <ruby> launcher.rb .../servers/passenger/boot.rb WORK_DIR/passenger.json
    #
    # boot.rb runs Passenger's watchdog in the foreground as its child (not
    # `passenger start`, which always daemonizes it out of the server's
    # process tree; see boot.rb), so the process tree is
    #
    #   boot (ruby) -> PassengerAgent watchdog -> PassengerAgent core
    #     -> preloader (ruby) -> P app processes (ruby)
    #
    # and every ruby process of it is the trial's ruby started through
    # rackbench's launcher: each reports its identity.
    #
    # The agent (PassengerAgent, C++) is not in the gem: rackbench compiles
    # it from the gem's source, offline, once per installed passenger gem
    # (#prepare_bundle, PassengerAgentBuild).
    class Passenger < Adapter
      SETTINGS_FILE = "passenger.json"
      BOOT_SCRIPT = File.expand_path("passenger/boot.rb", __dir__)
      # Smart spawning, Passenger's default for Ruby apps: a preloader loads
      # the app once and forks the app processes. Direct spawning (every app
      # process loads the app itself) is not offered: readiness waits for
      # the line each app process prints when the preloader forks it (the
      # app loaded), a direct-spawned process is never forked, and Passenger
      # logs nothing when one has loaded the app.
      SPAWN_METHOD = "smart"
      # The boot process, the watchdog, the core and the preloader, besides
      # the app processes.
      FIXED_PROCESSES = 4
      APP_PROCESS_READY = /\[rackbench\] passenger app process \d+ forked from the preloader/

      Option = ServerOptions::Option
      OPTIONS = ServerOptions::Schema.new(
        Option.new(key: "max_request_queue_size", type: ServerOptions.integer(min: 0), default: "100",
                   effect: "requests the core queues while every app process is busy; one more gets a 503 " \
                           "(0: no limit). A load with more connections than processes + this queues into 503s",
                   reaches: "`--max-request-queue-size N` (core)"),
        Option.new(key: "socket_backlog", type: ServerOptions.integer(min: 1), default: "2048",
                   effect: "the listen socket's backlog (the kernel caps it at net.core.somaxconn)",
                   reaches: "`--socket-backlog N` (core)"),
        Option.new(key: "turbocaching", type: ServerOptions::BOOLEAN,
                   default: "false (rackbench's; Passenger's own default is on)",
                   effect: "true: Passenger's core caches responses the app marks cacheable and answers repeats " \
                           "itself, without the app; off by default so a trial measures the app server " \
                           "(a cache in front of the app is a topology of its own)",
                   reaches: "no flag / `--disable-turbocaching` (core)")
      )

      def name = "passenger"

      def server_gem = "passenger"

      def option_schema = OPTIONS

      # Passenger's native support (a C extension) is compiled with the
      # agent, before the first trial (#prepare_bundle): an app process must
      # never compile it during a trial's boot, nor download one.
      NATIVE_SUPPORT_ENV = { "PASSENGER_COMPILE_NATIVE_SUPPORT_BINARY" => "0",
                             "PASSENGER_DOWNLOAD_NATIVE_SUPPORT_BINARY" => "0" }.freeze

      def env
        NATIVE_SUPPORT_ENV
      end

      # Passenger 6.2's helper scripts (prespawn, the preloader) require
      # base64, which Ruby 3.4 moved from the default gems to the bundled
      # ones: inside a bundle that does not name it, they fail to load
      # and no app process starts. The gem is named for every ruby (on
      # older ones it is the default gem's own version), so every ruby's
      # bundle has the same line.
      # Its full hijack (rack.hijack), as Action Cable uses it.
      def websocket = "rack.hijack"

      def gem_lines(_ruby_engine)
        ['gem "passenger"', 'gem "base64"']
      end

      def supports
        "processes >= 1 (a C++ core + N single-threaded app processes), threads 1 (more needs Passenger " \
          "Enterprise); CRuby only"
      end

      # Writes WORK_DIR/passenger.json (the trial's settings, read by
      # boot.rb) and returns the argv that runs boot.rb through the launcher.
      def command(app_dir:, config_ru:, port:, processes:, work_dir:, options: {}, environment: DEFAULT_ENVIRONMENT,
                  host: HOST, websocket: false, **)
        values = option_values(options)
        settings = {
          "host" => host, "port" => Integer(port), "processes" => Integer(processes),
          "app_root" => File.expand_path(app_dir), "startup_file" => File.basename(config_ru.to_s),
          "environment" => environment_name(environment),
          "spawn_method" => SPAWN_METHOD,
          "core_flags" => core_flags(values, websocket)
        }
        config = write_work_file(work_dir, SETTINGS_FILE, "#{JSON.pretty_generate(settings)}\n")
        [BOOT_SCRIPT, config]
      end

      # At least the boot process, the watchdog, the core, the preloader
      # and the P app processes (Passenger's short-lived spawn helpers may
      # add more: the ready line is what counts the app processes).
      def worker_processes(processes)
        processes + FIXED_PROCESSES
      end

      # The line each app process prints (through Passenger's log) once the
      # preloader, which had loaded the app, has forked it (passenger/app_process.rb).
      def ready_log(processes)
        [APP_PROCESS_READY, processes]
      end

      # Compiles Passenger's agent for the bundle's passenger gem unless it
      # is there (PassengerAgentBuild); +out+ receives the progress lines,
      # +log+ the compiler's output.
      def prepare_bundle(bundle, out:, log:, tty: false, extra_env: {})
        require_relative "passenger/agent_build"
        PassengerAgentBuild.new(bundle).ensure_built!(out: out, log: log, tty: tty, extra_env: extra_env)
      end

      # The agent's compile, when install's gems have no agent and this
      # machine has none cached for the version (PassengerAgentPlan).
      def preparation(install)
        require_relative "passenger/agent_plan"
        PassengerAgentPlan.new(install).preparation
      end

      private

      # A WebSocket trial: a socket the app took over (rack.hijack) stays
      # counted as a request in flight, and with one request per process
      # the second client would wait for the first to close. Passenger's
      # own advice for Action Cable: no limit per process.
      def core_flags(values, websocket)
        flags = websocket ? ["--force-max-concurrent-requests-per-process", "0"] : []
        if values.key?("max_request_queue_size")
          flags += ["--max-request-queue-size", Integer(values["max_request_queue_size"]).to_s]
        end
        flags += ["--socket-backlog", Integer(values["socket_backlog"]).to_s] if values.key?("socket_backlog")
        flags << "--disable-turbocaching" unless values["turbocaching"]
        flags
      end

      # The open-source edition runs one request at a time per app process:
      # its multi-threaded concurrency model (--concurrency-model thread,
      # --app-thread-count) is Passenger Enterprise's.
      def own_limits(threads:, ruby_engine:, **)
        if jruby?(ruby_engine)
          return "passenger: rackbench runs it on CRuby only (its app processes are forked from a preloader)"
        end
        return nil if threads == 1

        "passenger (open source) runs each app process single-threaded: threads #{threads} needs Passenger " \
          "Enterprise's --concurrency-model thread; use threads 1"
      end
    end

    register :passenger, Passenger.new
  end
end
