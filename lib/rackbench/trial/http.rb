# frozen_string_literal: true

require_relative "kind"

module Rackbench
  module Trial
    # An HTTP trial: prepare the (app, ruby, server) bundle, build the
    # server's environment from named sources, boot the server and prove it
    # runs what the trial names (ServerLaunch), warm up and measure with the
    # load engine while sampling the server's process tree and what else the
    # machine does (LoadRun), stop the server, and return the Record.
    #
    # Its collaborators are injected, so that the orchestration is tested
    # against fakes (test/fixtures/fakes/) in milliseconds:
    #
    # :bundles :: fetch(app, install, adapter, log_dir:) => an installed BundleEnv (default: a BundleCache)
    # :engine :: run(settings, env:) => LoadResult (default: the native LoadEngine)
    # :launcher :: called with the keywords of ServerLaunch.new, returns an object whose #boot returns
    #              ServerLaunch::Booted (default: ServerLaunch.new)
    # :sampler :: called with the booted server, returns #start / #stop like Sampler (default: a Sampler of its tree)
    # :machine :: returns #start / #stop like MachineLoad (default: MachineLoad.new)
    # :probe :: called with a variant and a ServerEnv, returns what that ruby reports about itself
    #           (default: Identity::Expectation.probe)
    # :inside :: called with Inside::Collection.new's keywords, returns an object whose #collect returns
    #            [counts, missing] (default: Inside::Collection.new)
    # :proxies :: called with a proxy name, returns its topology (default: Proxy.fetch; tests pass
    #             one with a missing binary)
    # :proxy_launcher :: called with Proxy::Launch.new's keywords, returns an object whose #start
    #                    returns a Proxy::Running (default: Proxy::Launch.new)
    # :valgrind :: what instructions trials run under (default: Instructions::Valgrind.find)
    # :valgrind_support :: answers why a ruby variant cannot run under valgrind (#reason(variant,
    #                      env:); default: an Instructions::Support keeping its answers in the
    #                      rackbench cache)
    # :load_hosts :: the experiment's load hosts (load.host) (default: a LoadHosts over ssh)
    # :gc_run :: runs a ruby's `-w` check of its RUBY_GC_* variables before the run
    #            (GcSettingsCheck; default: Rubies::Child.run)
    # :services :: what starts the apps' services: #check!(apps) (raises ConfigError) and
    #              #start(apps, context:) returning what Services::Started.start returns (#for(app name)
    #              => Services::Group, #stop) (default: Services::Started)
    class Http < Kind
      NAME = "http"
      # Above this share of failed requests (transport errors and responses
      # other than 2xx/3xx) a trial is recorded as failed: its throughput
      # would measure error handling, not the configuration. An app that
      # fails requests on purpose raises it in its app.yml (max_error_rate).
      MAX_ERROR_RATE = 0.01

      def self.reading = Http::Reading

      def initialize(context, bundles: nil, engine: LoadEngine.new, launcher: ServerLaunch.method(:new),
                     sampler: ->(server) { Sampler.new(server.pid, pgid: server.pgid) }, machine: -> { MachineLoad.new },
                     probe: Identity::Expectation.method(:probe), inside: Inside::Collection.method(:new),
                     max_error_rate: MAX_ERROR_RATE, proxies: Proxy.method(:fetch),
                     proxy_launcher: Proxy::Launch.method(:new), load_hosts: LoadHosts.new, valgrind: nil,
                     valgrind_support: nil, services: Services::Started, gc_run: Rubies::Child.method(:run))
        super(context)
        @gc_run = gc_run
        @load_hosts = load_hosts
        @valgrind = valgrind
        @valgrind_support = valgrind_support
        @services_source = services
        @services = nil
        @proxies = proxies
        @proxy_launcher = proxy_launcher
        @bundles = bundles || BundleCache.new(out: context.out, marker_env: context.marker_env,
                                              parent_env: context.parent_env, extra_gem_lines: profile_gem_lines,
                                              user: context.results_dir)
        @engine = engine
        @launcher = launcher
        @sampler = sampler
        @machine = machine
        @probes = Identity::Probes.new(probe)
        @max_error_rate = max_error_rate
        @inside = inside
        @calibrations = Calibration::Cache.new(
          results_dir: context.results_dir, fingerprint: context.source.fingerprint,
          calibration: Calibration.new(engine: @engine, marker_env: context.marker_env)
        )
      end

      # A server adapter's limits (the load protocol among them), a built-in
      # app's engines, a proxy whose program is not installed, or, when the
      # experiment counts instructions, a ruby variant valgrind cannot run.
      def unsupported_reason(config, variant)
        engine = variant.install.engine
        server = Servers.fetch(config.server.name)
        server.unsupported_reason(processes: config.processes, threads: config.threads,
                                  ruby_engine: engine, options: config.server.options) ||
          tls_reason(config, server) ||
          server.protocol_reason(config.load.fetch(:protocol, "http1"), tls: config.load[:tls] == true) ||
          (config.app.builtin ? Apps.builtin(config.app.name).unsupported_reason(engine) : nil) ||
          (config.proxied? ? @proxies.call(config.proxy).unsupported_reason : nil) ||
          count_reason(config) || valgrind_reason(variant)
      end

      # load.tls needs a server that terminates TLS itself, no proxy in
      # front (it would have to terminate TLS in the server's place), and
      # the engine beside the server.
      def tls_reason(config, server)
        return nil unless config.load[:tls]
        return "load.tls with a proxy in front is not supported yet (#{config.proxy} would terminate TLS)" if config.proxied?
        # The run's certificate names 127.0.0.1 only; a load host reaches
        # the server at another address, which the engine would refuse.
        return "load.tls with a load host (load.host) is not supported yet: the run's certificate names 127.0.0.1 only" if config.load[:host]

        server.tls_reason
      end

      # A variable the experiment passes from the shell must be there: a
      # server started without its DATABASE_URL would fail in ways that name
      # anything but the cause.
      #
      # Every load host (load.host) is reached first: ssh, its engine, the
      # address the servers will listen on.
      def check!
        check_profiler!
        @load_hosts.prepare!(source.configurations) if source.respond_to?(:configurations)
        check_services!
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

        beside = [(source.respond_to?(:proxy) && source.proxy != [Proxy::NONE] ? "the proxy" : nil),
                  (service_apps.empty? ? nil : "the services")].compact
        proxy = beside.empty? ? "" : " (with #{beside.join(" and ")})"
        ["server on CPU #{layout.server_cpus.join(",")}#{proxy}, load engine on CPU #{layout.engine_cpus.join(",")}",
         *lines]
      end

      # The services of the run's apps (`services:`, Services::Started),
      # started before the block (the run's trials) and stopped after it,
      # however it ends. A service that cannot start raises SetupError in
      # one line before any trial.
      def around_run
        return yield if service_apps.empty?

        @services = @services_source.start(service_apps, context: @context)
        begin
          yield
        ensure
          started = @services
          @services = nil
          started.stop
        end
      end

      # Runs trial (an Experiment::Plan::Trial); returns its Record.
      # Interrupt and Interrupted (Ctrl-C) propagate after the server was
      # stopped; every other failure is a failed record with its reason.
      def run(trial)
        config = trial.config
        variant = @context.variants.fetch(config.ruby.label)
        load_settings = config.load.transform_keys(&:to_s)
        load_settings["profile"] = trial.profile.to_h if trial.profiled?
        load_settings[Instructions::SETTINGS_KEY] = Instructions::INSTRUCTIONS if instructions?(trial)
        record(trial, ruby_description: variant.description, env: config.env, log_path: log_path(trial),
                      load_settings: load_settings, layout: @context.layout.to_h) do |facts|
          measure(trial, variant, facts)
        end
      end

      private

      # A window of a fixed count has quiet edges, where a request list's
      # session probes would be requests of no window (the engine refuses
      # both together): nil, or why this configuration cannot run.
      def count_reason(config)
        return nil unless config.load[:count]

        app = App.resolve(config.app)
        file = config.load[:requests_file] || app.requests
        return nil unless file && (app.expect_session_body || RequestList.probes?(File.read(file)))

        "load.count cannot be combined with the session probes of #{config.app.name}'s request list yet"
      end

      # What the trial learns, in order; facts keeps what is known before
      # a failure (the gem versions, what the server ran).
      def measure(trial, variant, facts)
        app = App.resolve(trial.config.app)
        # Normally left out of the plan already; a clear failure otherwise,
        # before minutes of a gem install that cannot work.
        reason = app.unsupported_reason(variant.install.engine)
        raise SetupError, reason if reason

        services = services_for(app)
        services&.begin_trial # the documents are this trial's restore and window only
        measure_app(trial, variant, facts, app, services)
      ensure
        facts[:services] = services.documents if services
      end

      # The trial of app (with its Services::Group, or nil) from its bundle
      # to its server's stop.
      def measure_app(trial, variant, facts, app, services)
        config = trial.config
        adapter = Servers.fetch(config.server.name)
        bundle = bundle_for(config, app, variant, adapter)
        facts[:gem_versions] = bundle.gem_versions
        facts[:network] = @load_hosts.network(config) # the round trip, before the server boots
        env = server_env(config, app, variant, adapter, bundle, work_dir(trial), profile: trial.profile,
                         agents: !instructions?(trial))
        counting = instructions_run(trial)
        calibrate_first(trial, app, variant, adapter, bundle, env, counting)
        window = WindowMarks.new(work_dir(trial))
        counting&.prepare!
        booted = with_window(window) do
          launch(trial, app, variant, adapter, bundle, env, window: window, counting: counting).boot
        end
        facts.merge!(boot_s: booted.boot_s, identity: booted.identity, ruby_description: booted.identity["description"])
        Array(booted.identity["warnings"]).each { |warning| @context.out.puts "warning: #{slug(trial)}: #{warning}" }
        proxy = nil
        begin
          proxy = ProxyStart.new(trial: trial, app: app, server: booted.server, context: @context, guard: guard,
                                 proxies: @proxies, launcher: @proxy_launcher, work_dir: work_dir(trial)).start
          edges = counting&.edges(booted.server)
          engine = @load_hosts.engine(config, booted.server, app.health || app.load_path, local: @engine)
          measured = LoadRun.new(trial: trial, app: app, server: booted.server, engine: engine,
                                 layout: @context.layout, seed: @context.source.seed,
                                 max_error_rate: app.max_error_rate || @max_error_rate,
                                 marker_env: @context.marker_env, sampler: @sampler.call(booted.server),
                                 machine: @machine.call, calibrations: @calibrations, window: window,
                                 proxy: proxy, services: services, work_dir: work_dir(trial),
                                 tls: tls_certificate(config), edges: edges).run(facts)
          measured = measured.merge(inside: inside(trial, booted, window, measured[:result]))
          measured = counting.add_to(measured, edges, booted) if counting
          trial.profiled? ? ProfileRun.new(trial, work_dir(trial), @context.results_dir).add_to(measured) : measured
        ensure
          begin
            ProxyStart.stop(proxy, facts) # before the server it forwards to
          ensure
            facts[:stop_s] = booted.server.stop(grace_s: @context.stop_grace_s)[:stop_s]
          end
          window.close
          booted.app_logs&.copy(work_dir(trial)) # the app's own logs of the trial, into its directory
        end
      end

      # The counting agent's document, collected from the server's
      # processes once the window has ended and before the server stops;
      # nil when no agent counts (`inside: off`) or no window ended.
      def inside(trial, booted, window, result)
        return nil if instructions?(trial)
        return nil unless Inside.mode(source) == Inside::COUNTING && window.marked?(:end)

        counts, missing = @inside.call(server: booted.server, trial_dir: work_dir(trial),
                                       identity: booted.identity).collect
        Inside::Document.build(counts: counts, missing: missing, requests: result["requests"],
                               duration_s: result["duration_s"])
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
      # An instructions trial's is calibrated under valgrind, with the
      # instrumentation on that its window's requests run with (+counting+,
      # its InstructionsRun, or nil).
      def calibrate_first(trial, app, variant, adapter, bundle, env, counting = nil)
        config = trial.config
        return unless config.load[:timeout_s].nil?

        measure = instructions?(trial) ? Instructions::INSTRUCTIONS : Instructions::TIME
        return if @calibrations.known?(config, trial_measure: measure)

        window = WindowMarks.new(work_dir(trial)) # never marked: no window on this server
        counting&.prepare!
        booted = with_window(window) do
          launch(trial, app, variant, adapter, bundle, env, window: window, counting: counting).boot
        end
        begin
          settings = LoadRun.settings(trial: trial, app: app, port: booted.server.port, layout: @context.layout,
                                      seed: source.seed, tls: tls_certificate(config))
          switch_on(counting, booted.server) if counting
          @calibrations.fetch(config, settings, trial_measure: measure)
        rescue SetupError
          raise if booted.server.alive?

          raise SetupError, booted.server.failure("during the calibration")
        ensure
          booted.server.stop(grace_s: @context.stop_grace_s)
          window.close
        end
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

      def launch(trial, app, variant, adapter, bundle, env, window: nil, counting: nil)
        expectation = lambda do
          Identity::Expectation.build(variant: variant, probe: @probes.fetch(variant, env), env: env,
                                      server_gem: adapter.server_gem,
                                      server_version: bundle.gem_versions[adapter.server_gem],
                                      threads: trial.config.threads, bundle_without: bundle.groups&.without,
                                      gc_compact_before_fork: trial.config.server.options["gc_compact_before_fork"] == true,
                                      gems: bundle.gem_versions, gem_pins: trial.config.gems || {})
        end
        @launcher.call(trial: trial, app: app, variant: variant, adapter: adapter, bundle: bundle, env: env,
                       expectation: expectation, layout: @context.layout, work_dir: work_dir(trial),
                       log_path: log_path(trial), ready_timeout_s: ready_timeout_s(counting),
                       stop_grace_s: @context.stop_grace_s, guard: guard, hooks: hooks, window: window,
                       bind_host: @load_hosts.bind_host(trial.config), tls: tls_certificate(trial.config),
                       services: services_for(app), **(counting ? { wrapper: counting.wrapper } : {}))
      end

      # The readiness deadline: valgrind's boot is slower (InstructionsRun).
      def ready_timeout_s(counting)
        counting ? counting.ready_timeout_s(@context.ready_timeout_s) : @context.ready_timeout_s
      end

      # The started services of app (a Services::Group), or nil for an app
      # without services.
      def services_for(app)
        @services&.for(app.name)
      end

      # The run's apps that have services (resolved Apps), once.
      def service_apps
        @service_apps ||= if source.respond_to?(:apps)
                            source.apps.map { |spec| App.resolve(spec) }.reject { |app| app.services.empty? }
                          else
                            []
                          end
      end

      # A service whose program is not installed, or (as root) whose
      # account does not exist, stops the run before anything is stored.
      def check_services!
        @services_source.check!(service_apps) unless service_apps.empty?
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
      # the shell but what ServerEnv lets through.
      # A profiled trial's server also gets RACKBENCH_PROFILE (the
      # launcher then loads agent/profile.rb); a plain trial's never does.
      # An instructions trial's server (+agents+ false) runs no counting
      # agent: nothing of rackbench's is awake in it during the window.
      def server_env(config, app, variant, adapter, bundle, work_dir, profile: nil, agents: true)
        inside = agents ? Inside.env(Inside.mode(source)) : {}
        trial_env = { "RACKBENCH_TRIAL_DIR" => work_dir, Identity::SERVER_GEM_VAR => adapter.server_gem,
                      Identity::LATE_VAR => "1", **inside, **@context.marker_env }
        # The profiler listens to the window too, whether or not the
        # counting agent runs.
        trial_env.merge!(WindowMarks::ENV_VAR => "1", ProfileRun::ENV_VAR => profile.env_value) if profile
        trial_env.merge!(adapter.tls_env(tls_certificate(config), work_dir)) if config.load[:tls]
        # An instructions trial's server: the window channel with the GC
        # agent alone (Instructions::Window).
        trial_env.merge!(Instructions::Window::SERVER_ENV) unless agents
        ServerEnv.new(parent: @context.parent_env, bundle: bundle, server_env: adapter.env,
                      service_env: services_for(app)&.env || {}, app_env: app.env,
                      ruby_env: variant.env, experiment_env: config.env, pass_env: source.pass_env,
                      trial_env: trial_env,
                      also_check: watched_env, threads: config.threads, processes: config.processes)
      end

      # Every variable a ruby variant, an app or the experiment's env sets
      # somewhere in the experiment: each trial's identity check verifies
      # its own value of each, so the plain variant proves it runs without
      # the YJIT variant's MALLOC_ARENA_MAX, not only the reverse.
      def watched_env
        @watched_env ||= begin
          apps = source.apps.flat_map do |spec|
            (spec.builtin ? Apps.builtin(spec.name).env.keys : []) + spec.env.to_h.keys
          end
          # A service's variable: the apps without the service prove they
          # run without it (rails-posts on SQLite has no DATABASE_URL).
          apps += service_apps.flat_map { |app| app.services.flat_map(&:env_names) }
          # A variant's malloc sets (or unsets) LD_PRELOAD.
          rubies = source.rubies.flat_map { |r| r.env.keys + (r.malloc ? ["LD_PRELOAD"] : []) }
          (rubies + source.env.keys + apps).uniq
        end
      end

      def slug_parts(config)
        [config.app.name, config.server.label, config.ruby.label, "p#{config.processes}", "t#{config.threads}",
         *(config.proxied? ? [config.proxy] : [])]
      end

      # A profiled trial's directory and log are apart from its batch's
      # plain trial of the same configuration.
      def slug(trial)
        return "#{super}-profile" if trial.profiled?

        instructions?(trial) ? "#{super}-instructions" : super
      end

      # The experiment's profile settings (Profile::Settings), or nil when
      # it profiles nothing or its source has no such key.
      def profile_settings
        source.respond_to?(:profile) ? source.profile : nil
      end

      def profile_gem_lines
        profile_settings&.gem_lines || []
      end

      # A profiler that cannot run under one of the experiment's rubies
      # stops the run before anything is stored, naming the ruby.
      def check_profiler!
        profile = profile_settings
        return unless profile

        @context.variants.each_value do |variant|
          reason = profile.unsupported_reason(variant.install)
          raise ConfigError, "#{source.source}: #{reason}" if reason
        end
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
require_relative "http/inside"
require_relative "http/load_run"
require_relative "http/load_hosts"
require_relative "http/proxy_start"
require_relative "http/profile_run"
require_relative "http/instructions_run"
require_relative "http/instructions_trials"
require_relative "http/examination"
