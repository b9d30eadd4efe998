# frozen_string_literal: true

require "test_helper"
require "rbconfig"
require "rackbench/servers"
require "rackbench/process/ports"
require "rackbench/observe/process_tree"
require "rackbench/observe/sampler"
require "rackbench/process/server_process"

# Boots real servers (Puma and WEBrick, each in its own Bundler environment
# as the runner uses them) on a hello-world app: ready, app check, one
# second of sampling under a little load, stop; then nothing may be left.
describe "real servers" do
  HELLO_APP = <<~RUBY
    # frozen_string_literal: true

    run ->(_env) { [200, { "content-type" => "text/plain" }, ["Hello, world!"]] }
  RUBY

  before do
    @dir = Dir.mktmpdir("rackbench-real-servers")
    File.write(File.join(@dir, "config.ru"), HELLO_APP)
    File.write(File.join(@dir, "Gemfile"), "source \"https://rubygems.org\"\n")
    @variant = Rackbench::Rubies.resolve({ ruby: RbConfig.ruby }, installs: [])
  end

  after { FileUtils.remove_entry(@dir) }

  # The server's Bundler environment, installed on first use (cached).
  def bundle_for(adapter)
    bundle = Rackbench::BundleEnv.new(app_dir: @dir, install: @variant.install,
                                      gemfile_extra: adapter.gem_lines(@variant.install.engine))
    bundle.ensure_installed!
    bundle
  end

  def run_server(name, processes:, threads:)
    adapter = Rackbench::Servers.fetch(name)
    assert_nil adapter.unsupported_reason(processes: processes, threads: threads, ruby_engine: RUBY_ENGINE)
    port = Rackbench::Ports.free_port
    work_dir = File.join(@dir, "work-#{name}").tap { |dir| FileUtils.mkdir_p(dir) }
    bundle = bundle_for(adapter)
    argv = bundle.exec_prefix + adapter.command(app_dir: @dir, config_ru: File.join(@dir, "config.ru"), port: port,
                                                processes: processes, threads: threads, work_dir: work_dir)
    server = Rackbench::ServerProcess.new(argv: argv, env: bundle.env.merge(adapter.env), chdir: @dir,
                                          log_path: File.join(@dir, "logs", "#{name}.log"), port: port)
    begin
      server.start
      server.wait_ready(health_path: "/", timeout_s: 15, expected_processes: adapter.worker_processes(processes),
                        ready_log: adapter.ready_log(processes))
      server.check_app(path: "/", expect_status: 200, expect_body: "Hello, world!")
      summary, pids = sample_under_load(server)
    ensure
      server.stop
    end
    assert_all_gone(server, pids)
    summary
  end

  # About a second of sequential requests while the sampler runs.
  def sample_under_load(server)
    sampler = Rackbench::Sampler.new(server.pid, interval_s: 0.1).start
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 1.0
    server.check_app(path: "/") while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    [sampler.stop, server.processes]
  end

  def assert_all_gone(server, pids)
    refute server.alive?
    pids.each do |pid|
      entry = Rackbench::ProcessTree.read(pid)
      assert(entry.nil? || entry.zombie?, "process #{pid} is still alive")
    end
    assert_empty Rackbench::ProcessTree.pids(server.pid, pgid: server.pgid)
    refute Rackbench::Ports.in_use?(server.port), "port #{server.port} is still in use"
  end

  def assert_plausible_memory(summary)
    %i[rss_peak_bytes rss_mean_bytes pss_peak_bytes pss_mean_bytes].each do |key|
      assert_operator summary[key], :>, 1_000_000, key
    end
    assert_operator summary[:pss_peak_bytes], :<=, summary[:rss_peak_bytes]
    assert_operator summary[:samples], :>=, 5
  end

  it "runs Puma as a cluster of 2 workers x 2 threads" do
    summary = run_server("puma", processes: 2, threads: 2)
    assert_equal 3, summary[:processes_peak]
    assert_plausible_memory(summary)
    assert_operator summary[:cpu_user_s] + summary[:cpu_system_s], :>, 0
  end

  it "runs WEBrick with 2 threads" do
    summary = run_server("webrick", processes: 1, threads: 2)
    assert_equal 1, summary[:processes_peak]
    assert_plausible_memory(summary)
  end
end
