# frozen_string_literal: true

require_relative "../monotonic_clock"
require "fileutils"

module Rackbench
  class Runner
    # Runs one trial: prepare the (app, ruby, server) bundle, build the
    # server's environment from named sources, boot the server and prove it
    # runs what the trial names (ServerLaunch), warm up and measure with the
    # load engine while sampling the server's process tree and what else
    # the machine does, stop the server (TERM, wait, KILL the group, reap,
    # port free) and return the trial's attributes for the store. Any
    # failure becomes a failed trial with its reason; only Interrupt and
    # store errors escape.
    class TrialRunner
      include MonotonicClock

      # Above this share of failed requests (transport errors and responses
      # other than 2xx/3xx) a trial is recorded as failed: its throughput
      # would measure error handling, not the configuration. An app that
      # fails requests on purpose raises it in its app.yml (max_error_rate).
      MAX_ERROR_RATE = 0.01
      SETUP_TIMEOUT_S = ServerLaunch::SETUP_TIMEOUT_S
      GUARD = ServerLaunch::GUARD

      # :variants :: label => Rubies::Variant
      # :bundles :: a BundleCache
      # :engine :: a LoadEngine
      # :layout :: a CpuLayout
      # :results_dir :: where logs/ and work/ go
      # :seed :: the experiment's seed (the engine's request mix uses seed + batch)
      # :pass_env :: variable names the servers take from the shell (default: [])
      # :watched_env :: names any ruby variant, app or configuration of the
      #                 experiment sets: every trial proves its own values of
      #                 them, unset ones included (default: [])
      # :parent_env :: the shell's environment (default: ENV)
      # :ready_timeout_s :: how long a server may take to answer (default: 60)
      # :stop_grace_s :: time the server gets after TERM before KILL (default: 10)
      # :max_error_rate :: see MAX_ERROR_RATE
      # :setup_timeout_s :: deadline of an app's setup step (default: 300)
      def initialize(variants:, bundles:, engine:, layout:, results_dir:, seed:, pass_env: [], watched_env: [],
                     parent_env: ENV,
                     ready_timeout_s: 60, stop_grace_s: 10, max_error_rate: MAX_ERROR_RATE,
                     setup_timeout_s: SETUP_TIMEOUT_S)
        @variants = variants
        @bundles = bundles
        @engine = engine
        @layout = layout
        @results_dir = results_dir
        @seed = seed
        @pass_env = pass_env
        @watched_env = watched_env
        @parent_env = parent_env
        @ready_timeout_s = ready_timeout_s
        @stop_grace_s = stop_grace_s
        @max_error_rate = max_error_rate
        @setup_timeout_s = setup_timeout_s
        @probes = {}
      end

      # Runs trial (a Plan::Trial); returns the attributes Store#save_trial
      # takes. Interrupt and Interrupted (Ctrl-C) propagate after the
      # server was stopped; every other failure is recorded in the result.
      def run(trial)
        attrs = base_attributes(trial)
        started = now
        attrs[:started_at] = Time.now.utc
        begin
          measure(trial, attrs)
        rescue Interrupted
          raise
        rescue IdentityMismatch => e
          attrs.merge!(status: "failed", reason: e.message)
          attrs[:identity] = e.record if e.record
        rescue Error => e
          attrs.merge!(status: "failed", reason: e.message)
        end
        attrs.merge!(finished_at: Time.now.utc, wall_s: now - started)
      end

      private

      def measure(trial, attrs)
        config = trial.config
        variant = @variants.fetch(config.ruby.label)
        adapter = Servers.fetch(config.server.name)
        app = resolve_app(config.app)
        # Normally left out of the plan already; a clear failure otherwise,
        # before minutes of a gem install that cannot work.
        reason = app.unsupported_reason(variant.install.engine)
        raise SetupError, reason if reason

        bundle = @bundles.fetch(app, variant.install, adapter, log_dir: logs_dir)
        attrs[:gem_versions] = bundle.gem_versions
        work_dir = File.join(@results_dir, "work", trial_slug(trial)).tap { |dir| FileUtils.mkdir_p(dir) }
        env = server_env(config, app, variant, adapter, bundle, work_dir)
        attrs[:log_path] = File.join(logs_dir, "#{trial_slug(trial)}.log")
        booted = launch(trial, app, variant, adapter, bundle, env, work_dir, attrs[:log_path]).boot
        attrs.merge!(boot_s: booted.boot_s, identity: booted.identity,
                     ruby_description: booted.identity["description"])
        begin
          LoadRun.new(trial: trial, app: app, server: booted.server, engine: @engine, layout: @layout, seed: @seed,
                      max_error_rate: app.max_error_rate || @max_error_rate, results_dir: @results_dir).run(attrs)
        ensure
          attrs[:stop_s] = booted.server.stop(grace_s: @stop_grace_s)[:stop_s]
        end
      end

      def launch(trial, app, variant, adapter, bundle, env, work_dir, log_path)
        expectation = lambda do
          Identity::Expectation.build(variant: variant, probe: probe(variant, env), env: env,
                                      server_gem: server_gem(adapter),
                                      server_version: bundle.gem_versions[server_gem(adapter)])
        end
        ServerLaunch.new(trial: trial, app: app, variant: variant, adapter: adapter, bundle: bundle, env: env,
                         expectation: expectation, layout: @layout, work_dir: work_dir, log_path: log_path,
                         ready_timeout_s: @ready_timeout_s, stop_grace_s: @stop_grace_s,
                         setup_timeout_s: @setup_timeout_s)
      end

      # What the variant's own command says it runs, with the trial's
      # variables; asked once per variant and set of variables.
      def probe(variant, env)
        key = [variant.command, env.to_h.reject { |name, _| name.start_with?("RACKBENCH_", "BUNDLE_") }.sort]
        @probes[key] ||= Identity::Expectation.probe(variant, env)
      end

      def server_gem(adapter)
        adapter.respond_to?(:server_gem) ? adapter.server_gem : adapter.name
      end

      # The server's whole environment (see ServerEnv): nothing leaks from
      # the shell but what ServerEnv lets through.
      def server_env(config, app, variant, adapter, bundle, work_dir)
        ServerEnv.new(parent: @parent_env, bundle: bundle, server_env: adapter.env, app_env: app.env || {},
                      ruby_env: variant.env, experiment_env: config.env, pass_env: @pass_env,
                      trial_env: trial_env(work_dir, adapter), also_check: @watched_env)
      end

      # rackbench's own variables, always last: the trial's directory (the
      # channel from the server's processes; it also marks every process of
      # the trial), the results directory (the mark the watchdog sweeps by),
      # and the gem whose version the identity agent reports.
      def trial_env(work_dir, adapter)
        { "RACKBENCH_TRIAL_DIR" => work_dir, Identity::SERVER_GEM_VAR => server_gem(adapter),
          **Watchdog.marker_env(@results_dir) }
      end

      def resolve_app(spec)
        base = spec.builtin ? Apps.builtin(spec.name).to_h : { name: spec.name, builtin: false }
        overrides = spec.to_h.compact.slice(:name, :health, :load_path, :expect_status, :expect_content_type,
                                            :expect_body)
        overrides[:dir] = spec.path if spec.path
        # The experiment's app env adds to (and wins over) the app's own.
        overrides[:env] = (base[:env] || {}).merge(spec.env || {})
        App.new(health: "/", load_path: "/", expect_status: 200, **base.merge(overrides))
      end

      def base_attributes(trial)
        config = trial.config
        variant = @variants.fetch(config.ruby.label)
        {
          key: trial.key, batch: trial.batch, position: trial.index, ruby: config.ruby.label,
          ruby_description: variant.description, server: config.server.label, app: config.app.name,
          processes: config.processes, threads: config.threads, dims: config.dims,
          load_settings: config.load.transform_keys(&:to_s), env: config.env, layout: @layout.to_h
        }
      end

      def trial_slug(trial)
        c = trial.config
        [format("%04d", trial.index), c.app.name, c.server.label, c.ruby.label, "p#{c.processes}", "t#{c.threads}",
         "b#{trial.batch}"].join("-").gsub(/[^A-Za-z0-9._-]/, "_")
      end

      def logs_dir
        File.join(@results_dir, "logs").tap { |dir| FileUtils.mkdir_p(dir) }
      end
    end
  end
end
