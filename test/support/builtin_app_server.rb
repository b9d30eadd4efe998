# frozen_string_literal: true

require "fileutils"

# Boots a built-in app under a server adapter as a trial would (its Bundler
# environment, the app's setup, readiness, and the app's check unless told
# not to), on the running ruby, outside any Runner: for integration tests
# that need a live app to drive by hand. Included in their describe blocks.
module BuiltinAppServer
  # Yields the ServerProcess and the trial directory (under +dir+); always
  # stops the server.
  #
  # :server_name :: the adapter (default: "puma")
  # :threads :: server threads, 1 process (default: 2)
  # :check :: run the app's own check once it is ready (default: true)
  def with_builtin_app(app_name, dir:, server_name: "puma", threads: 2, check: true)
    app = Rackbench::Apps.builtin(app_name)
    adapter = Rackbench::Servers.fetch(server_name)
    variant = Rackbench::Rubies.resolve({ ruby: RbConfig.ruby }, installs: [])
    bundle = Rackbench::BundleEnv.new(app_dir: app.dir, install: variant.install, gemfile_extra: adapter.gem_lines("ruby"))
    bundle.ensure_installed!
    work = File.join(dir, "work-#{app_name}").tap { |path| FileUtils.mkdir_p(path) }
    env = bundle.env.merge(adapter.env).merge("RACKBENCH_TRIAL_DIR" => work)
    if app.setup
      result = Rackbench::Rubies::Child.run(bundle.exec_prefix + [app.setup], env: ENV.to_h.merge(env).compact,
                                                                             timeout_s: 120, chdir: app.dir)
      assert result.success?, result.output
    end
    port = Rackbench::Ports.free_port
    argv = bundle.exec_prefix + adapter.command(app_dir: app.dir, config_ru: File.join(app.dir, "config.ru"),
                                                port: port, processes: 1, threads: threads, work_dir: work)
    server = Rackbench::ServerProcess.new(argv: argv, env: env, chdir: app.dir, port: port,
                                          log_path: File.join(dir, "#{app_name}.log"))
    begin
      server.start
      server.wait_ready(health_path: app.health, timeout_s: 60, ready_log: adapter.ready_log(1))
      if check
        server.check_app(path: app.load_path, expect_status: app.expect_status,
                         expect_content_type: app.expect_content_type, expect_body: app.expect_body)
      end
      yield server, work
    ensure
      server.stop
    end
  end
end
