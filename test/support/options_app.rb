# frozen_string_literal: true

require "rbconfig"
require "fileutils"
require "rackbench/servers"
require "rackbench/process/ports"
require "rackbench/observe/process_tree"
require "rackbench/process/server_process"
require_relative "raw_http"

# Boots a real server on test/fixtures/servers/options_app (in the Bundler
# environment the runner would use) with given options, and reads what the
# server and the app wrote: its log, which processes loaded the app, which
# requests reached it. For test/integration/server_options_test.rb.
module OptionsApp
  APP_DIR = File.expand_path("../fixtures/servers/options_app", __dir__)
  CONFIG_RU = File.join(APP_DIR, "config.ru")
  # Generous: two cores are shared with other suites, and a cluster loads
  # the app once per worker.
  READY_TIMEOUT_S = 90

  # One booted server: the ServerProcess, its trial directory (the app's
  # files and the generated config) and its port.
  class Booted
    attr_reader :server, :dir

    def initialize(server, dir)
      @server = server
      @dir = dir
    end

    def port
      server.port
    end

    def pid
      server.pid
    end

    def log
      File.read(server.log_path)
    end

    # PIDs of the processes that loaded config.ru, in order.
    def loaded_by
      lines("loaded_by.pids").map(&:to_i)
    end

    # PIDs of the processes that loaded the preload script.
    def preloaded_by
      lines("preloaded_by.pids").map(&:to_i)
    end

    # The queries of the requests that reached /called and /block.
    def called
      lines("called")
    end

    def release(name)
      FileUtils.touch(File.join(dir, "release-#{name}"))
    end

    def ppid(pid)
      Rackbench::ProcessTree.read(pid)&.ppid
    end

    # The backlog of the listen socket as the kernel holds it: for a
    # listening socket, ss(8) reports it as Send-Q.
    def listen_backlog
      line = IO.popen(["ss", "-Hltn", "sport = :#{port}"], &:read).lines.first
      raise "ss shows no listening socket on port #{port}" unless line

      Integer(line.split[2])
    end

    # How many epoll instances the process holds (anon_inode:[eventpoll]
    # among its open files).
    def epoll_fds(pid)
      Dir.glob("/proc/#{pid}/fd/*").count do |fd|
        File.readlink(fd) == "anon_inode:[eventpoll]"
      rescue SystemCallError
        false
      end
    end

    private

    def lines(file)
      path = File.join(dir, file)
      File.exist?(path) ? File.readlines(path, chomp: true) : []
    end
  end

  # Boots adapter +name+ with +options+, waits until it is ready, yields a
  # Booted and stops the server (leaving nothing behind) afterwards.
  # Returns the whole server log, read after the stop: some servers (Thin)
  # write their log through a buffer that is flushed only when they exit.
  # +env+ adds environment variables (e.g. PUMA_LOG_CONFIG).
  def boot(name, options, processes:, threads: 1, env: {})
    adapter = Rackbench::Servers.fetch(name)
    assert_nil adapter.unsupported_reason(processes: processes, threads: threads, ruby_engine: RUBY_ENGINE,
                                          options: options)
    dir = Dir.mktmpdir("rackbench-options-#{name}")
    bundle = options_bundle(adapter)
    port = Rackbench::Ports.free_port
    argv = bundle.exec_prefix + adapter.command(app_dir: APP_DIR, config_ru: CONFIG_RU, port: port,
                                                processes: processes, threads: threads, work_dir: dir,
                                                options: options, environment: "production")
    server_env = bundle.env.merge(adapter.env).merge("RACKBENCH_TRIAL_DIR" => dir).merge(env)
    server = Rackbench::ServerProcess.new(argv: argv, env: server_env, chdir: APP_DIR,
                                          log_path: File.join(dir, "server.log"), port: port)
    begin
      server.start
      server.wait_ready(health_path: "/", timeout_s: READY_TIMEOUT_S,
                        expected_processes: adapter.worker_processes(processes),
                        ready_log: adapter.ready_log(processes))
      yield Booted.new(server, dir)
    ensure
      server.stop
      refute server.alive?, "#{name} survived stop"
    end
    File.read(server.log_path)
  ensure
    FileUtils.remove_entry(dir) if dir
  end

  # The server's Bundler environment for the fixture app, installed on
  # first use and reused afterwards (the app directory is fixed, so is the
  # environment).
  def options_bundle(adapter)
    install = Rackbench::Rubies.resolve({ ruby: RbConfig.ruby }, installs: []).install
    bundle = Rackbench::BundleEnv.new(app_dir: APP_DIR, install: install,
                                      gemfile_extra: adapter.gem_lines(install.engine))
    bundle.ensure_installed!
    bundle
  end

  # A request that the client sends and then abandons (closes its end at
  # once), as a client that gave up would.
  def abandon(port, path)
    socket = RawHTTP.connect(port)
    RawHTTP.send_request(socket, path)
    socket.close
  end
end
