# frozen_string_literal: true

require_relative "../monotonic_clock"
require "fileutils"
require "shellwords"

module Rackbench
  class Runner
    # Runs one trial: prepare the (app, ruby, server) bundle, boot the
    # server pinned to its CPUs, wait until it answers (every worker
    # booted), check the app answers correctly (status, content type, body),
    # warm up and measure with the
    # load engine while sampling the server's process tree, stop the server
    # (TERM, wait, KILL the group, reap, port free) and return the trial's
    # attributes for the store. Any failure becomes a failed trial with its
    # reason; only Interrupt and store errors escape.
    class TrialRunner
      include MonotonicClock

      # Above this share of failed requests (transport errors and responses
      # other than 2xx/3xx) a trial is recorded as failed: its throughput
      # would measure error handling, not the configuration. An app that
      # fails requests on purpose raises it in its app.yml (max_error_rate).
      MAX_ERROR_RATE = 0.01
      # How long an app's setup step (seeding its database) may take.
      SETUP_TIMEOUT_S = 300
      SETUP_TAIL_LINES = 10
      GUARD = File.expand_path("../../rackbench-guard", __dir__)

      # :variants :: label => Rubies::Variant
      # :bundles :: a BundleCache
      # :engine :: a LoadEngine
      # :layout :: a CpuLayout
      # :results_dir :: where logs/ and work/ go
      # :seed :: the experiment's seed (the engine's request mix uses seed + batch)
      # :ready_timeout_s :: how long a server may take to answer (default: 60)
      # :stop_grace_s :: time the server gets after TERM before KILL (default: 10)
      # :max_error_rate :: see MAX_ERROR_RATE
      # :setup_timeout_s :: deadline of an app's setup step (default: 300)
      def initialize(variants:, bundles:, engine:, layout:, results_dir:, seed:, ready_timeout_s: 60,
                     stop_grace_s: 10, max_error_rate: MAX_ERROR_RATE, setup_timeout_s: SETUP_TIMEOUT_S)
        @variants = variants
        @bundles = bundles
        @engine = engine
        @layout = layout
        @results_dir = results_dir
        @seed = seed
        @ready_timeout_s = ready_timeout_s
        @stop_grace_s = stop_grace_s
        @max_error_rate = max_error_rate
        @setup_timeout_s = setup_timeout_s
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
        server = boot(trial, app, variant, adapter, bundle, attrs)
        begin
          run_load(trial, app, server, attrs)
        ensure
          attrs[:stop_s] = server.stop(grace_s: @stop_grace_s)[:stop_s]
        end
      end

      def boot(trial, app, variant, adapter, bundle, attrs)
        config = trial.config
        port = Ports.free_port
        work_dir = File.join(@results_dir, "work", trial_slug(trial))
        FileUtils.mkdir_p(work_dir)
        command = adapter.command(app_dir: app.dir, config_ru: File.join(app.dir, "config.ru"), port: port,
                                  processes: config.processes, threads: config.threads, work_dir: work_dir,
                                  options: config.server.options, environment: "production")
        argv = orphan_guard + @layout.server_prefix + bundle.exec_prefix(variant.command) + command
        # The experiment's env wins over the ruby variant's, which wins over
        # what the adapter and the bundle set.
        env = bundle.env.merge(adapter.env).merge(variant.env).merge(config.env)
        # The trial's own directory, where processes of the server may drop
        # files (profiles, stats); it also marks every process of the trial.
        env["RACKBENCH_TRIAL_DIR"] = work_dir
        log_path = File.join(logs_dir, "#{trial_slug(trial)}.log")
        attrs[:log_path] = log_path
        File.write(log_path, "")
        run_setup(app, bundle, variant, env, log_path) if app.setup
        File.write(log_path, "# #{argv.join(" ")}\n", mode: "a")
        server = ServerProcess.new(argv: argv, env: env, chdir: app.dir, log_path: log_path, port: port)
        server.start
        attrs[:boot_s] = server.wait_ready(health_path: app.health, timeout_s: @ready_timeout_s,
                                           expected_processes: adapter.worker_processes(config.processes),
                                           ready_log: adapter.ready_log(config.processes))
        server.check_app(path: app.load_path, expect_status: app.expect_status,
                         expect_content_type: app.expect_content_type, expect_body: app.expect_body)
        server
      rescue StandardError, Interrupt
        server&.stop(grace_s: @stop_grace_s)
        raise
      end

      # Runs the app's setup script (e.g. creating and seeding its database
      # in the trial's directory) to completion before the server boots, so
      # that the processes of a multi-process server never race to create
      # it, and so that it is never measured. It runs with the server's
      # environment and bundle, in the app's directory; its output goes to
      # the trial's log. A failure or a timeout fails the trial with the
      # tail of that output.
      def run_setup(app, bundle, variant, env, log_path)
        argv = bundle.exec_prefix(variant.command) + [app.setup]
        File.write(log_path, "# setup: #{Shellwords.join(argv)}\n", mode: "a")
        offset = File.size(log_path)
        result = Rubies::Child.run(argv, env: ENV.to_h.merge(env).compact, timeout_s: @setup_timeout_s,
                                         log_path: log_path, chdir: app.dir)
        return if result.success?

        what = result.timed_out ? "timed out after #{@setup_timeout_s} s" : "exited with status #{result.status.exitstatus}"
        raise SetupError, "app setup #{File.basename(app.setup)} #{what}: #{output_tail(log_path, offset)}"
      rescue SystemCallError => e
        raise SetupError, "cannot run the setup of #{app.name}: #{e.message}"
      end

      def output_tail(path, offset)
        text = File.open(path, "rb") do |file|
          file.seek(offset)
          file.read
        end
        lines = text.force_encoding(Encoding::UTF_8).scrub.lines.map(&:rstrip).reject(&:empty?)
        lines.empty? ? "no output" : lines.last(SETUP_TAIL_LINES).join("\n")
      end

      def run_load(trial, app, server, attrs)
        config = trial.config
        settings = LoadSettings.build(url: "http://#{Servers::HOST}:#{server.port}#{app.load_path}",
                                      **config.load, **app_requests(config, app),
                                      cpus: @layout.engine_cpus, seed: @seed + trial.batch)
        sampler = Sampler.new(server.pid, pgid: server.pgid)
        # The sampler covers the measured window only: it starts when the
        # engine's warmup ends (the engine starts its clock ~20 ms after
        # launch, a negligible offset at sampling intervals of 250 ms).
        starter = Thread.new do
          sleep settings.warmup_s
          sampler.start
        end
        begin
          result = @engine.run(settings)
        ensure
          starter.kill
          starter.join
          sample = stop_sampler(sampler)
        end
        record(attrs, result, sample, settings)
        judge(attrs, result, server, app.max_error_rate || @max_error_rate)
      end

      # An app that ships a request list (the mix variant of rails-posts)
      # is loaded with it, each connection keeping its cookies: the list
      # logs in once and then browses as that user. load.requests in the
      # experiment file wins.
      def app_requests(config, app)
        return {} if config.load[:requests_file] || app.requests.nil?

        { requests_file: app.requests, cookies: true }
      end

      # The summary, or nil when the run ended before the warmup did.
      def stop_sampler(sampler)
        sampler.stop
      rescue Error
        nil
      end

      def record(attrs, result, sample, settings)
        attrs.merge!(
          warmup_s: result.warmup["duration_s"], measure_s: result.duration_s, rps: result.rps,
          requests: result.requests, errors: result.failed_count, error_rate: result.failure_rate,
          latency_us: result.latency_us, engine_result: result.to_h, sampler: sample,
          rss_peak_bytes: sample&.fetch(:rss_peak_bytes, nil), pss_peak_bytes: sample&.fetch(:pss_peak_bytes, nil),
          cpu_user_s: sample&.fetch(:cpu_user_s, nil), cpu_system_s: sample&.fetch(:cpu_system_s, nil),
          load_settings: settings.to_h.transform_keys(&:to_s)
        )
      end

      def judge(attrs, result, server, max_error_rate)
        unless server.alive?
          return attrs.merge!(status: "failed", reason: "server exited during the measurement: #{server.log_tail(5)}")
        end
        if result.requests.zero?
          return attrs.merge!(status: "failed", reason: "no response in the measured window (errors: #{result.errors})")
        end
        rate = result.failure_rate
        if rate > max_error_rate
          return attrs.merge!(status: "failed",
                              reason: format("error rate %.2f%% above %.2f%% (%s)", rate * 100, max_error_rate * 100,
                                             failures(result)))
        end

        attrs[:status] = "ok"
      end

      # Failed requests by kind: the engine's transport errors, and
      # responses whose status is not 2xx or 3xx by status ("500" => 12):
      # a server answering 500 fast is not a result either.
      def failures(result)
        statuses = result.status.reject { |code, _| code.to_i.between?(200, 399) }
        result.errors.select { |_, n| n.positive? }.merge(statuses.select { |_, n| n.positive? })
      end

      # If the runner itself dies (kill -9), its server must not live on:
      # rackbench-guard (built with the engine) sets the parent-death signal,
      # which survives the exec of taskset and the server, so the kernel
      # TERMs the server's main process (which stops its workers) when the
      # runner goes; it also refuses to start the server if the runner died
      # before the signal was armed.
      def orphan_guard
        [GUARD, Process.pid.to_s]
      end

      def resolve_app(spec)
        base = spec.builtin ? Apps.builtin(spec.name).to_h : { name: spec.name, builtin: false }
        overrides = spec.to_h.compact.slice(:name, :health, :load_path, :expect_status, :expect_content_type,
                                            :expect_body)
        overrides[:dir] = spec.path if spec.path
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
