# frozen_string_literal: true

require_relative "kind"

module Rackbench
  module Trial
    # An HTTP trial: prepare the (app, ruby, server) bundle, build the
    # server's environment from named sources, boot the server and prove it
    # runs what the trial names (ServerLaunch), warm up and measure with the
    # load engine (LoadRun), stop the server, and return the Record. What
    # runs beside the server (a sampler of its processes, the machine's
    # load, a proxy, the app's services, the counting agent, valgrind's
    # edges, a profiler, the window's marks, the TLS check) are its
    # companions (Companion): each in its own file under
    # trial/http/companions/, registered by name, called at the trial's
    # steps without being named here.
    #
    # Its collaborators are injected, so that the orchestration is tested
    # against fakes (test/fixtures/fakes/) in milliseconds:
    #
    # :bundles :: fetch(app, install, adapter, log_dir:) => an installed BundleEnv (default: a BundleCache)
    # :engine :: run(settings, env:) => LoadResult (default: the native LoadEngine)
    # :launcher :: called with the keywords of ServerLaunch.new, returns an object whose #boot returns
    #              ServerLaunch::Booted (default: ServerLaunch.new)
    # :probe :: called with a variant and a ServerEnv, returns what that ruby reports about itself
    #           (default: Identity::Expectation.probe)
    # :load_hosts :: the experiment's load hosts (load.host) (default: a LoadHosts over ssh)
    # :gc_run :: runs a ruby's `-w` check of its RUBY_GC_* variables before the run
    #            (GcSettingsCheck; default: Rubies::Child.run)
    # :companions :: name => a Companion class (or a Proc called with a Companion::Setup): what runs
    #                beside the server (default: every registered one, Http.companions; tests replace
    #                some with fakes)
    class Http < Kind
      NAME = "http"
      # Above this share of failed requests (transport errors and responses
      # other than 2xx/3xx) a trial is recorded as failed: its throughput
      # would measure error handling, not the configuration. An app that
      # fails requests on purpose raises it in its app.yml (max_error_rate).
      MAX_ERROR_RATE = 0.01

      def self.reading = Http::Reading

      def initialize(context, bundles: nil, engine: LoadEngine.new, launcher: ServerLaunch.method(:new),
                     probe: Identity::Expectation.method(:probe), max_error_rate: MAX_ERROR_RATE,
                     load_hosts: LoadHosts.new, gc_run: Rubies::Child.method(:run), companions: Http.companions)
        super(context)
        @companions = Companions::Roster.new(companions, Companion::Setup.new(context: context, guard: guard))
        @gc_run = gc_run
        @load_hosts = load_hosts
        @bundles = bundles || BundleCache.new(out: context.out, marker_env: context.marker_env,
                                              parent_env: context.parent_env, extra_gem_lines: @companions.gem_lines,
                                              user: context.results_dir)
        @engine = engine
        @launcher = launcher
        @probes = Identity::Probes.new(probe)
        @max_error_rate = max_error_rate
        @calibrations = Calibration::Cache.new(
          results_dir: context.results_dir, fingerprint: context.source.fingerprint,
          calibration: Calibration.new(engine: @engine, marker_env: context.marker_env)
        )
      end

      # A server adapter's limits (the load protocol among them), a built-in
      # app's engines, or what a companion cannot do (a proxy whose program
      # is not installed, load.tls on a server without it, a ruby variant
      # valgrind cannot run).
      def unsupported_reason(config, variant)
        engine = variant.install.engine
        server = Servers.fetch(config.server.name)
        server.unsupported_reason(processes: config.processes, threads: config.threads,
                                  ruby_engine: engine, options: config.server.options) ||
          @companions.unsupported_reason(config, variant) ||
          server.protocol_reason(config.load.fetch(:protocol, "http1"), tls: config.load[:tls] == true) ||
          (config.app.builtin ? Apps.builtin(config.app.name).unsupported_reason(engine) : nil)
      end

      # What the companions check (a profiler every ruby can run, the
      # services' programs); every load host (load.host) reached (ssh, its
      # engine, the address the servers will listen on); and a variable the
      # experiment passes from the shell must be there: a server started
      # without its DATABASE_URL would fail in ways that name anything but
      # the cause.
      def check!
        @companions.check!
        @load_hosts.prepare!(source.configurations) if source.respond_to?(:configurations)
        missing = source.pass_env.reject { |name| @context.parent_env.key?(name) }
        return if missing.empty?

        them = missing.size == 1 ? "it" : "them"
        raise ConfigError, "pass_env names #{missing.join(", ")}, not set in this shell: export #{them} or remove " \
                           "#{them} from pass_env"
      end

      # The CPU layout, and a user's database pool fixed below the threads
      # (PoolCheck).
      def announce
        layout = @context.layout
        lines = PoolCheck.warnings(source.apps, source.threads.max)
        return lines unless layout.pinned?

        beside = @companions.beside_server
        proxy = beside.empty? ? "" : " (with #{beside.join(" and ")})"
        ["server on CPU #{layout.server_cpus.join(",")}#{proxy}, load engine on CPU #{layout.engine_cpus.join(",")}",
         *lines]
      end

      # The run's trials (the block) inside what the companions keep for the
      # whole run (the apps' services, started before and stopped after).
      def around_run(&)
        @companions.around_run(&)
      end

      # Runs trial (an Experiment::Plan::Trial); returns its Record.
      # Interrupt and Interrupted (Ctrl-C) propagate after the server was
      # stopped; every other failure is a failed record with its reason.
      def run(trial)
        config = trial.config
        variant = @context.variants.fetch(config.ruby.label)
        scene = scene(trial, variant)
        parts = @companions.parts(scene)
        load_settings = parts.record_settings(record_load(config.load).transform_keys(&:to_s))
        record(trial, ruby_description: variant.description, env: config.env, log_path: log_path(trial),
                      load_settings: load_settings, layout: @context.layout.to_h) do |facts|
          measure(scene, parts, facts)
        end
      end

      private

      # The load a record says it ran with before its engine said more: an
      # HTTP trial's keeps no WebSocket key (Trial::Ws keeps them all).
      def record_load(load)
        load.except(*Experiment::WebSocketLoad::OPTIONS)
      end

      # What a part of a companion knows about trial (Companion::Scene).
      def scene(trial, variant, examining: false)
        config = trial.config
        Companion::Scene.new(trial: trial, app: App.resolve(config.app), variant: variant,
                             adapter: Servers.fetch(config.server.name), work_dir: work_dir(trial),
                             window: WindowMarks.new(work_dir(trial)), tls: tls_certificate(config),
                             examining: examining)
      end

      # What the trial learns, in order; facts keeps what is known before
      # a failure (the gem versions, what the server ran). +parts+ are the
      # trial's Companions::Parts.
      def measure(scene, parts, facts)
        app = scene.app
        # Normally left out of the plan already; a clear failure otherwise,
        # before minutes of a gem install that cannot work.
        reason = app.unsupported_reason(scene.variant.install.engine)
        raise SetupError, reason if reason

        measure_app(scene, parts, facts)
      ensure
        parts.finish(facts)
      end

      # The trial of scene from its bundle to its server's stop.
      def measure_app(scene, parts, facts)
        config = scene.config
        bundle = bundle_for(config, scene.app, scene.variant, scene.adapter)
        facts[:gem_versions] = bundle.gem_versions
        facts[:network] = @load_hosts.network(config) # the round trip, before the server boots
        env = server_env(scene, bundle, parts)
        calibrate_first(scene, bundle, env, parts)
        window = scene.window
        booted = with_window(window) { launch(scene, bundle, env, parts, window: window).boot }
        facts.merge!(boot_s: booted.boot_s, identity: booted.identity, ruby_description: booted.identity["description"])
        Array(booted.identity["warnings"]).each { |warning| @context.out.puts "warning: #{slug(scene.trial)}: #{warning}" }
        begin
          parts.call(:after_boot, booted)
          parts.document(load_run(scene, parts, booted.server).run(facts))
        ensure
          begin
            parts.stop(facts) # before the server they stand beside
          ensure
            facts[:stop_s] = booted.server.stop(grace_s: @context.stop_grace_s)[:stop_s]
          end
          window.close
          booted.app_logs&.copy(scene.work_dir) # the app's own logs of the trial, into its directory
        end
      end

      # What measures the trial of scene against its booted server: the
      # load engine's warmup and window (LoadRun), run with the record's
      # facts (a kind of its own measures otherwise: Trial::Ws).
      def load_run(scene, parts, server)
        config = scene.config
        app = scene.app
        engine = @load_hosts.engine(config, server, app.health || app.load_path, local: @engine)
        LoadRun.new(trial: scene.trial, app: app, server: server, engine: engine, layout: @context.layout,
                    seed: @context.source.seed, max_error_rate: app.max_error_rate || @max_error_rate,
                    marker_env: @context.marker_env, calibrations: @calibrations, parts: parts,
                    work_dir: scene.work_dir, tls: scene.tls)
      end

      # A configuration whose timeout is left to calibration, and not yet
      # calibrated, is calibrated on a server of its own, booted and stopped
      # before the trial's (Calibration). On the trial's server the
      # calibration's load would come on top of the first batch's warmup,
      # and a request mix that writes (replies posted) would change the data
      # the app's reset just restored, for the first batch only: every batch
      # must measure the same thing. The app's reset runs again before the
      # trial's own boot.
      #
      # Its server runs as the trial's will (the same environment and
      # launch prefix: an instructions trial's under valgrind), and the
      # parts learn that its load starts (valgrind's instrumentation is
      # switched on, as the window's requests will run with it).
      def calibrate_first(scene, bundle, env, parts)
        trial = scene.trial
        config = trial.config
        return unless config.load[:timeout_s].nil?

        measure = trial_measure(trial)
        return if @calibrations.known?(config, trial_measure: measure)

        window = WindowMarks.new(scene.work_dir) # never marked: no window on this server
        booted = with_window(window) { launch(scene, bundle, env, parts, window: window).boot }
        begin
          settings = LoadRun.settings(trial: trial, app: scene.app, port: booted.server.port, layout: @context.layout,
                                      seed: source.seed, tls: scene.tls, parts: parts)
          parts.call(:calibration_load, booted.server)
          @calibrations.fetch(config, settings, trial_measure: measure)
        rescue SetupError
          raise if booted.server.alive?

          raise SetupError, booted.server.failure("during the calibration")
        ensure
          booted.server.stop(grace_s: @context.stop_grace_s)
          window.close
        end
      end

      def trial_measure(trial)
        LoadRun.measure_of(trial)
      end

      # Runs the block (a boot); closes window's pipes when it raises.
      def with_window(window)
        yield
      rescue StandardError, Interrupt
        window.close
        raise
      end

      # A server that ran something other than its label stores what it ran.
      def failure_fields(error)
        error.is_a?(IdentityMismatch) && error.record ? { identity: error.record } : {}
      end

      # The ServerLaunch of scene's server, with the trial's parts (their
      # launch prefix, readiness deadline and boot hooks).
      def launch(scene, bundle, env, parts, window: nil)
        trial = scene.trial
        adapter = scene.adapter
        variant = scene.variant
        expectation = lambda do
          Identity::Expectation.build(variant: variant, probe: @probes.fetch(variant, env), env: env,
                                      server_gem: adapter.server_gem,
                                      server_version: bundle.gem_versions[adapter.server_gem],
                                      threads: trial.config.threads, bundle_without: bundle.groups&.without,
                                      gc_compact_before_fork: trial.config.server.options["gc_compact_before_fork"] == true,
                                      gems: bundle.gem_versions, gem_pins: trial.config.gems || {})
        end
        @launcher.call(trial: trial, app: scene.app, variant: variant, adapter: adapter, bundle: bundle, env: env,
                       expectation: expectation, layout: @context.layout, work_dir: scene.work_dir,
                       log_path: log_path(trial), ready_timeout_s: parts.ready_timeout_s(@context.ready_timeout_s),
                       stop_grace_s: @context.stop_grace_s, guard: guard, hooks: hooks, window: window,
                       bind_host: @load_hosts.bind_host(trial.config), tls: scene.tls, parts: parts,
                       wrapper: parts.launch_prefix)
      end

      # load.tls: the run's certificate (Tls.certificate), made once into
      # the results directory (tls/) and kept there for a resumed run;
      # nil for a plain trial.
      def tls_certificate(config)
        return nil unless config.load[:tls]

        @tls_certificate ||= Tls.certificate(File.join(@context.results_dir, "tls"))
      end

      # The user's app's setup runs once per run and Bundler environment.
      def hooks
        @hooks ||= AppHooks.new(logs_dir: @context.logs_dir)
      end

      # The server's whole environment (see ServerEnv): nothing leaks from
      # the shell but what ServerEnv lets through. The trial's parts add
      # their layers: rackbench's own markers (the agent, the profiler, the
      # window's channel, the certificate's place) and the services'
      # addresses.
      def server_env(scene, bundle, parts)
        config = scene.config
        trial_env = { "RACKBENCH_TRIAL_DIR" => scene.work_dir, Identity::SERVER_GEM_VAR => scene.adapter.server_gem,
                      Identity::LATE_VAR => "1", **parts.env("trial"), **@context.marker_env }
        ServerEnv.new(parent: @context.parent_env, bundle: bundle, server_env: scene.adapter.env,
                      service_env: parts.env("services"), app_env: scene.app.env,
                      ruby_env: scene.variant.env, experiment_env: config.env, pass_env: source.pass_env,
                      trial_env: trial_env,
                      also_check: watched_env, threads: config.threads, processes: config.processes)
      end

      # Every variable a ruby variant, an app, the experiment's env or a
      # companion (a service's address) sets somewhere in the experiment:
      # each trial's identity check verifies its own value of each, so the
      # plain variant proves it runs without the YJIT variant's
      # MALLOC_ARENA_MAX, not only the reverse.
      def watched_env
        @watched_env ||= begin
          apps = source.apps.flat_map do |spec|
            (spec.builtin ? Apps.builtin(spec.name).env.keys : []) + spec.env.to_h.keys
          end
          # A variant's malloc sets (or unsets) LD_PRELOAD.
          rubies = source.rubies.flat_map { |r| r.env.keys + (r.malloc ? ["LD_PRELOAD"] : []) }
          (rubies + source.env.keys + apps + @companions.watched_env).uniq
        end
      end

      def slug_parts(config)
        [config.app.name, config.server.label, config.ruby.label, "p#{config.processes}", "t#{config.threads}",
         *(config.proxied? ? [config.proxy] : [])]
      end

      # A profiled trial's directory and log are apart from its batch's
      # plain trial of the same configuration, and so are an instructions
      # trial's.
      def slug(trial)
        return "#{super}-profile" if trial.profiled?

        trial_measure(trial) == Instructions::TIME ? super : "#{super}-#{trial_measure(trial)}"
      end
    end

    register Http::NAME, Http
  end
end

require_relative "http/reading"
require_relative "http/lock_notice"
require_relative "http/pool_check"
require_relative "http/bundle_cache"
require_relative "http/gem_sets"
require_relative "http/gc_settings_check"
require_relative "http/preparation"
require_relative "identity"
require_relative "http/app_hooks"
require_relative "http/app_logs"
require_relative "http/server_launch"
require_relative "http/calibration"
require_relative "http/window_marks"
require_relative "http/window_edges"
require_relative "http/inside"
require_relative "http/load_run"
require_relative "http/load_hosts"
require_relative "http/companion"
require_relative "http/companions"
require_relative "http/examination"
