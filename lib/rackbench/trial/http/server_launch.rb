# frozen_string_literal: true

require "fileutils"
require "shellwords"

module Rackbench
  module Trial
    class Http < Kind
      # Starts one trial's server and proves it before anything is measured:
      # the environment built from named sources (ServerEnv), the app's setup
      # step, the server booted pinned to its CPUs through the guard, ready,
      # every process's identity checked against the trial's configuration
      # (Identity::Check), and the app's answer checked. Any failure stops
      # what was started and raises; the caller records the reason.
      class ServerLaunch
        # How long an app's setup step (seeding its database) may take.
        SETUP_TIMEOUT_S = 300
        SETUP_TAIL_LINES = 10

        # What a booted server gives the trial: the ServerProcess, the seconds
        # it took to be ready, the identity record (what really runs, with
        # the app's hooks that ran before it: "hooks"), and the app's own
        # logs as they were at boot (AppLogs: copy them once it stopped).
        Booted = Struct.new(:server, :boot_s, :identity, :app_logs, keyword_init: true)

        # :trial, :app (an App), :variant, :adapter, :bundle (installed BundleEnv)
        # :env :: the trial's ServerEnv
        # :expectation :: called once the server is ready, returns the
        #                 Identity::Expectation its processes must meet (it
        #                 runs the variant's ruby: after the app's setup, so a
        #                 setup failure is named as such)
        # :layout :: the CpuLayout
        # :work_dir :: the trial's directory (RACKBENCH_TRIAL_DIR)
        # :log_path :: the trial's server log
        # :ready_timeout_s, :stop_grace_s, :setup_timeout_s :: deadlines
        # :guard :: the argv prefix that ties the server's life to the runner's (Kind#guard)
        # :hooks :: the run's AppHooks (the user's app's setup and reset) (default: a fresh one)
        # :window :: the WindowMarks of the server's measured window, whose edges' pipes the server
        #            inherits when the window channel is on (default: a fresh one, never marked)
        # :bind_host :: the address the server listens on: the loopback, or the address a load host
        #               reaches (load.host) (default: Servers::HOST)
        # :tls :: load.tls: the Tls::Certificate the server presents on its TLS bind; its probes,
        #         app and session checks speak https, and a TLS check proves the certificate
        #         (default: nil)
        # :wrapper :: an argv prefix the server's command runs under, after the CPU pinning (an
        #             instructions trial's valgrind: the parts' launch prefix) (default: none)
        # :parts :: the trial's Companions::Parts, told before the boot, asked whether the app's state is
        #           kept apart (a service's template: the app's setup then runs once), told once the app's
        #           hooks and setup ran (the services' template put back), and given the booted server to
        #           prove once its identity is checked (load.tls: the certificate it serves) (default: none)
        def initialize(trial:, app:, variant:, adapter:, bundle:, env:, expectation:, layout:, work_dir:, log_path:,
                       ready_timeout_s:, stop_grace_s:, guard:, setup_timeout_s: SETUP_TIMEOUT_S, hooks: nil,
                       window: nil, bind_host: Servers::HOST, tls: nil, wrapper: [], parts: Companions::Parts.new([]))
          @trial = trial
          @app = app
          @variant = variant
          @adapter = adapter
          @bundle = bundle
          @env = env
          @expectation = expectation
          @layout = layout
          @work_dir = work_dir
          @log_path = log_path
          @ready_timeout_s = ready_timeout_s
          @stop_grace_s = stop_grace_s
          @setup_timeout_s = setup_timeout_s
          @guard = guard
          @hooks = hooks || AppHooks.new(logs_dir: File.dirname(log_path))
          @window = window || WindowMarks.new(work_dir)
          @bind_host = bind_host
          @tls = tls
          @wrapper = wrapper
          @parts = parts
        end

        # Boots and checks the server; returns Booted. On IdentityMismatch
        # the error carries the identity record.
        def boot
          config = @trial.config
          @parts.call(:before_boot)
          # Reports left by an earlier attempt at this trial (a resumed run)
          # must not vouch for this one.
          FileUtils.rm_rf(Identity.directory(@work_dir))
          FileUtils.mkdir_p(Identity.directory(@work_dir))
          @window.reset!
          File.write(@log_path, "")
          hooks = @hooks.before_trial(app: @app, bundle: @bundle, variant: @variant, adapter: @adapter, env: @env,
                                      work_dir: @work_dir)
          # A built-in app's setup seeds its services once: their template
          # holds what it wrote from then on.
          run_setup if @app.setup && !@parts.keeps_app_state?
          @parts.call(:before_spawn)
          app_logs = AppLogs.new(@app.dir)
          port = Ports.free_port(host: @bind_host)
          argv = @guard + @layout.server_prefix + @wrapper + @bundle.exec_prefix(@variant.command) + command(config, port)
          File.write(@log_path, "# #{argv.join(" ")}\n", mode: "a")
          server = ServerProcess.new(argv: argv, env: @env.to_h.merge(window_env), clean_env: true, chdir: @app.dir,
                                     log_path: @log_path, port: port, host: @bind_host,
                                     fds: window_env.empty? ? {} : @window.spawn_fds, tls: @tls)
          begin
            server.start
          ensure
            @window.spawned!
          end
          boot_s = server.wait_ready(health_path: @app.health, timeout_s: @ready_timeout_s,
                                     expected_processes: @adapter.worker_processes(config.processes),
                                     ready_log: @adapter.ready_log(config.processes))
          checking = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          expectation = Identity::Expectation.with_bundle(@expectation.call, @bundle)
          identity = Identity::Check.new(server: server, trial_dir: @work_dir, expectation: expectation).verify!
          identity["check_s"] = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - checking).round(4)
          identity["hooks"] = hooks unless hooks.empty?
          @parts.call(:prove, server, port, identity)
          # The app's first answer may compile its views (seconds for a big
          # app on a busy machine): it has the boot's allowance, and what it
          # took scales the session check's own deadline.
          asking = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          server.check_app(path: @app.load_path, expect_status: @app.expect_status,
                           expect_content_type: @app.expect_content_type, expect_body: @app.expect_body,
                           timeout_s: @ready_timeout_s)
          check_session(config, port, Process.clock_gettime(Process::CLOCK_MONOTONIC) - asking)
          Booted.new(server: server, boot_s: boot_s, identity: identity, app_logs: app_logs)
        rescue SetupError => e
          stop(server, app_logs)
          raise e if e.is_a?(IdentityMismatch)

          raise SetupError, app_logs ? app_logs.reason(e.message) : e.message
        rescue StandardError, Interrupt
          stop(server, app_logs)
          raise
        end

        private

        # The edges' descriptors, for a server whose environment turns the
        # window channel on.
        def window_env
          @env[WindowMarks::ENV_VAR] == "1" ? @window.env : {}
        end

        # Stops what was started and keeps the app's logs of the attempt.
        def stop(server, app_logs)
          server&.stop(grace_s: @stop_grace_s)
        ensure
          app_logs&.copy(@work_dir)
        end

        # With an expect_session_body and a request list (the experiment's
        # load.requests or the app's own), the list's first entries must log
        # in and the load path then show the session (SessionCheck), each
        # request given a multiple of first_response_s, the app check's time.
        def check_session(config, port, first_response_s)
          file = config.load[:requests_file] || @app.requests
          return unless @app.expect_session_body && file

          ServerProcess::SessionCheck.verify!(url: "#{@tls ? "https" : "http"}://#{@bind_host}:#{port}#{@app.load_path}",
                                              requests_file: file, expect_body: @app.expect_session_body,
                                              headers: config.load[:headers] || [],
                                              cookie_presets: config.load[:cookie_presets] || [],
                                              ca_file: @tls&.ca_path, first_response_s: first_response_s,
                                              timeout_s: config.load[:timeout_s])
        end

        def command(config, port)
          raise SetupError, @adapter.tls_reason if @tls && @adapter.tls_reason

          @adapter.command(app_dir: @app.dir, config_ru: File.join(@app.dir, "config.ru"), port: port,
                           processes: config.processes, threads: config.threads, work_dir: @work_dir,
                           options: config.server.options, environment: @env["RACK_ENV"], host: @bind_host, tls: @tls,
                           websocket: Experiment::WebSocketLoad.websocket?(config.load))
        end

        # Runs the app's setup script (e.g. creating and seeding its database
        # in the trial's directory) to completion before the server boots, so
        # that the processes of a multi-process server never race to create
        # it, and so that it is never measured. It runs with the server's
        # environment, ruby and bundle, in the app's directory; its output goes
        # to the trial's log. A failure or a timeout fails the trial with the
        # error its output names.
        def run_setup
          argv = @bundle.exec_prefix(@variant.command) + [@app.setup]
          File.write(@log_path, "# setup: #{Shellwords.join(argv)}\n", mode: "a")
          offset = File.size(@log_path)
          result = Rubies::Child.run(argv, env: @env.to_h, timeout_s: @setup_timeout_s, log_path: @log_path,
                                           chdir: @app.dir)
          # The setup ran through the launcher too, but it is no server process.
          FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@work_dir), "*")))
          return if result.success?

          what = result.timed_out ? "timed out after #{@setup_timeout_s} s" : "exited with status #{result.status.exitstatus}"
          tail = output_tail(offset)
          raise SetupError, "app setup #{File.basename(@app.setup)} #{what}: #{ServerProcess::LogError.line(tail)}\n#{tail}"
        rescue SystemCallError => e
          raise SetupError, "cannot run the setup of #{@app.name}: #{e.message}"
        end

        def output_tail(offset)
          text = File.open(@log_path, "rb") do |file|
            file.seek(offset)
            file.read
          end
          lines = text.force_encoding(Encoding::UTF_8).scrub.lines.map(&:rstrip).reject(&:empty?)
          lines.empty? ? "no output" : lines.last(SETUP_TAIL_LINES).join("\n")
        end
      end
    end
  end
end
