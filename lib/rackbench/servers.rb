# frozen_string_literal: true

require_relative "registry"
require_relative "server_options"

module Rackbench
  # The registry of app-server adapters (a Registry). Each adapter lives in
  # its own file, lib/rackbench/servers/NAME.rb, and registers itself under
  # NAME (as Roda plugins do), so adding a server means adding one file.
  #
  # == The adapter interface
  #
  # An adapter is an object (in practice one instance of a Servers::Adapter
  # subclass) that knows how to run one server and nothing else: it never
  # starts a process itself. ServerProcess starts what #command returns.
  #
  # name ::
  #   The registered name, a String ("puma").
  # server_gem ::
  #   The name of the gem whose version is the server ("puma", "webrick"),
  #   to verify which server version really runs.
  # gem_lines(ruby_engine) ::
  #   Gemfile lines the app's bundle needs to run this server on the given
  #   RUBY_ENGINE ("ruby", "jruby"), e.g. <tt>['gem "puma"']</tt>. They may
  #   constrain Rack where the server needs it (Unicorn: Rack 2).
  # option_schema ::
  #   The options an experiment may set for this server
  #   (<tt>servers[].options</tt>), a ServerOptions::Schema: each key with
  #   its type, its default, what it does and how it reaches the server.
  #   The experiment loader refuses any other key, or a value of the wrong
  #   type, before anything runs; ServerOptions::NONE for a server that
  #   takes none.
  # unsupported_reason(processes:, threads:, ruby_engine:, options: {}) ::
  #   nil when the server can run processes x threads on that engine with
  #   those options, else a one-line reason, so a plan can skip the
  #   combination up front (an option that only means something in a mode
  #   the combination does not use is refused, not ignored).
  # command(app_dir:, config_ru:, port:, processes:, threads:, work_dir:, options: {}, environment: "production", tls: nil, websocket: false) ::
  #   The argv (an Array of Strings, never a shell string) that boots the
  #   app bound to 127.0.0.1:port (with +tls+, a Tls::Certificate: bound
  #   with TLS, serving that certificate), to be prefixed with the bundle's exec
  #   prefix and run with app_dir as the working directory. Config files or
  #   boot scripts the server needs are written into work_dir. +options+
  #   is the Hash (String keys) of the trial's server options, every one of
  #   which is applied (ConfigError for one the schema refuses);
  #   +environment+ is the RACK_ENV the trial runs in, which servers with
  #   an environment flag (Puma, Unicorn, Pitchfork, Thin) are given;
  #   +websocket+ says the trial holds WebSocket connections open (a
  #   server that counts a taken-over socket as a request in flight, as
  #   Passenger does, must be told not to).
  # env ::
  #   Environment variables the server needs (RACK_ENV=production).
  # worker_processes(processes) ::
  #   How many processes the server runs when fully booted (Puma cluster:
  #   1 master + N workers); readiness waits for at least that many.
  # ready_log(processes) ::
  #   nil, or [Regexp, count]: a line the server logs once per booted worker,
  #   which readiness also waits for (a forked worker may still be loading
  #   the app; its log line says it has finished).
  # supports ::
  #   A short text for `rackbench servers`.
  # prepare_bundle(bundle, out:, log:, tty:, extra_env:) ::
  #   Work the server needs done once per installed BundleEnv before its
  #   first trial, such as compiling a part the gem ships as source
  #   (Passenger's agent); +out+ receives progress lines, +log+ the
  #   output. Returns :reused or :compiled; raises SetupError. Optional:
  #   most servers need none (Adapter's does nothing).
  # preparation(install) ::
  #   What #prepare_bundle will do for the bundles of +install+ (a
  #   Rubies::Install) when it takes minutes, known before any bundle is
  #   installed: a Servers::Preparation (what it is, an estimate of its
  #   time), or nil when nothing long is left to do (a compile cached on
  #   this machine). The plan, `--dry-run` and `rackbench check` show it
  #   before the work starts. Optional (Adapter's: nil).
  # protocols ::
  #   The load protocols (load.protocol) the server answers on its one
  #   http:// endpoint: "http1", and "h2c" for a server that also serves
  #   HTTP/2 over cleartext with prior knowledge (default: ["http1"]).
  # tls? ::
  #   Whether the adapter can start the server with a TLS endpoint
  #   (load.tls: #command's tls:) (default: false).
  # tls_reason ::
  #   nil for such an adapter, else the one-line reason the plan gives for
  #   leaving the trial out.
  # tls_protocols ::
  #   The load protocols its TLS endpoint answers: "http1", and "h2" for a
  #   server that chooses HTTP/2 by ALPN (default: ["http1"]).
  # websocket ::
  #   How the server hands a WebSocket upgrade to the app, for the
  #   identity record ("rack.hijack", "rack.upgrade", "async-websocket"),
  #   or nil when rackbench does not run WebSocket trials on it.
  # websocket_reason ::
  #   nil for a server that runs them (load.workload connect, echo,
  #   broadcast), else the one-line reason the plan gives for leaving the
  #   trial out.
  # tls_env(tls, work_dir) ::
  #   Variables the server needs to find the certificate (Falcon's
  #   loader looks in $XDG_STATE_HOME); files it needs go into work_dir
  #   (default: none).
  module Servers
    # Every server binds here explicitly: a benchmark server must never be
    # reachable from the network, and "localhost" may resolve to ::1.
    HOST = "127.0.0.1"

    # A long piece of work a server needs done on this machine before its
    # first trial (Adapter#preparation): +key+ identifies it (two rubies
    # needing one compile show it once), +text+ says what it is ("compile
    # Passenger 6.2.1's agent"), +estimate_s+ how long it likely takes and
    # +basis+ what that estimate rests on.
    Preparation = Struct.new(:key, :text, :estimate_s, :basis, keyword_init: true)


    REGISTRY = Registry.new("server", File.expand_path("servers", __dir__))

    class << self
      # Registers adapter under name (a String or Symbol).
      def register(name, adapter)
        REGISTRY.register(name, adapter)
      end

      # Removes the adapter registered as name (a test's own adapter, once
      # the test is done with it); returns it, or nil.
      def unregister(name)
        REGISTRY.unregister(name)
      end

      # The names of every registered adapter (all shipped ones are loaded
      # first), sorted.
      def names
        REGISTRY.names
      end

      # The adapter registered as name; raises ConfigError listing the known
      # names when there is none.
      def fetch(name)
        REGISTRY.fetch(name)
      end

      # Every adapter, in name order.
      def all
        REGISTRY.all
      end

      # The names of the adapters that can serve load.tls.
      def tls_capable
        all.select(&:tls?).map(&:name)
      end

      # The ServerOptions::Schema of the adapter registered as name, or nil
      # when there is none (the experiment loader then leaves the options to
      # be checked when the trial's command is built).
      def option_schema(name)
        REGISTRY[name]&.option_schema
      end
    end

    # Base class of the shipped adapters: defaults for the optional parts of
    # the interface and helpers shared by several servers.
    class Adapter
      # JRuby's RUBY_ENGINE. JRuby cannot fork and runs no MRI C extensions,
      # which rules out most servers.
      JRUBY = "jruby"

      # The RACK_ENV a trial runs in unless it says otherwise.
      DEFAULT_ENVIRONMENT = "production"

      def name
        raise NotImplementedError, "#{self.class} must define #name"
      end

      def server_gem
        raise NotImplementedError, "#{self.class} must define #server_gem"
      end

      # No options unless the adapter declares some.
      def option_schema
        ServerOptions::NONE
      end

      # Variables the server itself needs; none by default. RACK_ENV and
      # RAILS_ENV are rackbench's (production unless the experiment says
      # otherwise; see Trial::ServerEnv), never an adapter's.
      def env
        {}
      end

      # One process unless the adapter says otherwise.
      def worker_processes(_processes)
        1
      end

      def ready_log(_processes)
        nil
      end

      # Nothing to prepare unless the adapter says otherwise.
      def prepare_bundle(_bundle, out:, log:, tty: false, extra_env: {}); end

      # Nothing long to prepare unless the adapter says otherwise.
      def preparation(_install) = nil

      # Checks common to every server, then the adapter's own (#own_limits,
      # which also sees the options, String keys).
      def unsupported_reason(processes:, threads:, ruby_engine:, options: {})
        return "processes must be a positive integer (got #{processes.inspect})" unless positive?(processes)
        return "threads must be a positive integer (got #{threads.inspect})" unless positive?(threads)

        own_limits(processes: processes, threads: threads, ruby_engine: ruby_engine.to_s,
                   options: (options || {}).to_h.transform_keys(&:to_s))
      end

      # HTTP/1.1 only, unless the adapter says otherwise.
      def protocols
        %w[http1].freeze
      end

      # nil when the server answers load.protocol +protocol+ (over TLS
      # when +tls+), else a one-line reason (the trial is refused up front).
      def protocol_reason(protocol, tls: false)
        served = tls ? tls_protocols : protocols
        return nil if served.include?(protocol.to_s)

        over = tls ? " over TLS" : ""
        "#{name} does not serve #{protocol}#{over} (it serves #{served.join(", ")}#{over}); " \
          "load.protocol #{protocol} needs a server that does, e.g. falcon"
      end

      # No TLS endpoint unless the adapter says how to bind one.
      def tls?
        false
      end

      def tls_reason
        return nil if tls?

        "#{name}: rackbench does not start it with TLS (load.tls needs a server that terminates TLS itself: " \
          "#{Servers.tls_capable.join(", ")})"
      end

      def tls_protocols
        %w[http1].freeze
      end

      # No WebSockets unless the adapter says how the app gets them.
      def websocket = nil

      def websocket_reason
        return nil if websocket

        "#{name}: rackbench does not run WebSocket workloads on it (#{websocket_refusal}); servers that do: " \
          "#{Servers.all.select(&:websocket).map(&:name).join(", ")}"
      end

      def tls_env(_tls, _work_dir)
        {}
      end

      def to_s
        name
      end

      private

      # Why the server runs no WebSocket trial (websocket_reason).
      def websocket_refusal = "no WebSocket support known"

      # Subclasses override: nil or a one-line reason.
      def own_limits(processes:, threads:, ruby_engine:, options:); end

      # The trial's options checked against #option_schema (ConfigError
      # naming the server and the key), with String keys.
      def option_values(options)
        option_schema.validate!(options, name)
      end

      # The environment flag's value: a non-empty String.
      def environment_name(environment)
        value = environment.to_s
        raise ConfigError, "#{name}: environment must not be empty" if value.empty?

        value
      end

      def positive?(value)
        value.is_a?(Integer) && value.positive?
      end

      def jruby?(ruby_engine)
        ruby_engine.to_s == JRUBY
      end

      # The common JRuby refusal for servers built on fork or C extensions.
      def no_jruby(ruby_engine)
        "#{name} does not run on JRuby (it needs fork and C extensions)" if jruby?(ruby_engine)
      end

      # "ADDRESS:PORT" the server listens on: HOST, or the address a load
      # host reaches (load.host) when the trial gives one.
      def bind_address(port, host = HOST)
        "#{host}:#{Integer(port)}"
      end

      # Writes a generated file into work_dir and returns its path. Values
      # reach the file through #inspect only, so nothing is interpolated as
      # code or shell.
      def write_work_file(work_dir, file_name, text, mode: 0o644)
        path = File.join(File.expand_path(work_dir), file_name)
        File.write(path, text)
        File.chmod(mode, path)
        path
      end
    end
  end
end
