# frozen_string_literal: true

require "test_helper"
require "json"

# The identity check against real processes that load the agent, as
# rackbench's launcher loads it into every server: each knob is checked
# both ways (it holds where it should, and a difference is named). Real
# rubies start here (YJIT's take a second of CPU each), hence the
# integration tier.
describe Rackbench::Trial::Identity::Check do
  Identity = Rackbench::Trial::Identity
  FakeServer = Struct.new(:pid, :pgid)

  before do
    @dir = Dir.mktmpdir("rackbench-identity")
    FileUtils.mkdir_p(Identity.directory(@dir))
    @pids = []
  end

  after do
    @pids.each do |pid|
      Process.kill(:KILL, -pid)
    rescue Errno::ESRCH
      nil
    end
    @pids.each do |pid|
      Process.wait(pid)
    rescue Errno::ECHILD
      nil
    end
    FileUtils.rm_rf(@dir)
  end

  let(:install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: RbConfig.ruby, source: :path, engine: RUBY_ENGINE,
                                   version: RUBY_VERSION, ruby_version: RUBY_VERSION, description: RUBY_DESCRIPTION,
                                   jit: %w[yjit])
  end

  def variant(options: [], env: {})
    Rackbench::Rubies::Variant.new(install: install, name: options.empty? ? "plain" : "jit", options: options, env: env)
  end

  def server_env(ruby_env: {}, experiment_env: {}, late: false)
    Rackbench::Trial::ServerEnv.new(
      parent: ENV, bundle: Struct.new(:bundle_variables).new({}), ruby_env: ruby_env, experiment_env: experiment_env,
      trial_env: { "RACKBENCH_TRIAL_DIR" => @dir, Identity::SERVER_GEM_VAR => "minitest",
                   **(late ? { Identity::LATE_VAR => "1" } : {}) }
    )
  end

  def expectation(variant, env, server_gem: nil, server_version: nil, threads: nil, bundle_without: nil)
    Identity::Expectation.build(variant: variant, probe: Identity::Expectation.probe(variant, env), env: env,
                                server_gem: server_gem, server_version: server_version, threads: threads,
                                bundle_without: bundle_without)
  end

  # What an app that loaded ActiveRecord has: a Base whose pool has size
  # connections (the agent asks nothing else of it).
  def active_record(size)
    "module ActiveRecord; class Base; def self.connection_pool = Struct.new(:size).new(#{size}); end; end; "
  end

  # Starts a "server": ruby with the agent loaded first (as the launcher
  # does), then script; waits until `reports` processes have reported.
  def start(command, env, script, reports: 1, agent_first: true)
    args = agent_first ? ["-r", Identity::AGENT, "-e", script] : ["-e", script]
    pid = Process.spawn(env.to_h, *command, *args, unsetenv_others: true, pgroup: true, in: File::NULL)
    @pids << pid
    wait_until(timeout_s: 30, message: "#{reports} identity reports") do
      Dir.glob(File.join(Identity.directory(@dir), "*.json")).size >= reports
    end
    FakeServer.new(pid, pid)
  end

  def check(server, expected, **options)
    Identity::Check.new(server: server, trial_dir: @dir, expectation: expected, report_wait_s: 2, **options)
  end

  it "passes a server whose every process runs what the variant names, and records what ran" do
    env = server_env(ruby_env: { "MALLOC_ARENA_MAX" => "2" })
    server = start(variant.command, env, "2.times { fork { sleep } }; sleep", reports: 3)

    record = check(server, expectation(variant, env)).verify!

    assert_equal RUBY_DESCRIPTION.sub(" +YJIT", ""), record["description"]
    assert_equal File.realpath(RbConfig.ruby), record["exe"]
    assert_nil record["jit"]
    assert_equal({ "RACK_ENV" => "production", "RAILS_ENV" => "production", "MALLOC_ARENA_MAX" => "2" },
                 record["env"])
    assert_equal 3, record["processes"].size
    assert_equal(%w[exec fork fork], record["processes"].map { |p| p["event"] })
    assert(record["processes"].all? { |p| p["source"] == "reported" })
    assert_empty record["mismatches"]
  end

  it "checks the JIT both ways: on in the YJIT variant, off in the plain one" do
    # Debian's ruby3.1, which every machine here runs, has YJIT built in.
    assert system(RbConfig.ruby, "--yjit", "-e", "exit RubyVM::YJIT.enabled? ? 0 : 1"), "#{RbConfig.ruby} has no YJIT"
    env = server_env
    yjit = variant(options: ["--yjit"])
    plain = variant

    on = check(start(yjit.command, env, "sleep"), expectation(yjit, env)).verify!
    assert_equal "yjit", on["jit"]
    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))
    off = check(start(plain.command, env, "sleep"), expectation(plain, env)).verify!
    assert_nil off["jit"]
    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))

    # The bug this check exists for: the YJIT variant's server started with
    # the plain variant's command line, and the reverse.
    error = assert_raises(Rackbench::IdentityMismatch) do
      check(start(plain.command, env, "sleep"), expectation(yjit, env)).verify!
    end
    assert_match(/YJIT off, the variant 'jit' asks for it \(--yjit\)/, error.message)
    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))
    error = assert_raises(Rackbench::IdentityMismatch) do
      check(start(yjit.command, env, "sleep"), expectation(plain, env)).verify!
    end
    assert_match(/YJIT on, the variant 'plain' does not ask for a JIT/, error.message)
    assert_equal "yjit", error.record["jit"], "the failed trial stores what really ran"
  end

  it "names a variable the server runs with that the trial did not set, and one it lacks" do
    env = server_env(experiment_env: { "RAILS_ENV" => "production", "X" => "1" })
    # What a shell's export looked like before rackbench cleaned the
    # environment: the server sees another RAILS_ENV and no X.
    server = start(variant.command, env, 'ENV["RAILS_ENV"] = "development"; ENV.delete("X"); ' \
                                         "load #{Identity::AGENT.inspect}; sleep", agent_first: false)

    error = assert_raises(Rackbench::IdentityMismatch) { check(server, expectation(variant, env)).verify! }

    assert_match(/\Aidentity check failed: main process \d+: RAILS_ENV=development, the trial sets production/,
                 error.message)
    assert_includes error.record["mismatches"].last, "X is unset, the trial sets 1"
    assert_includes error.message, "(and 1 more)"
  end

  it "names another ruby than the variant's" do
    env = server_env
    expected = expectation(variant, env).to_h.merge("description" => "ruby 3.1.7p261 (2025-03-26 revision x) [x]")
    other = Identity::Expectation.new(**expected.transform_keys(&:to_sym))
    server = start(variant.command, env, "sleep")

    error = assert_raises(Rackbench::IdentityMismatch) { check(server, other).verify! }

    assert_match(/ran ruby #{Regexp.escape(RUBY_VERSION)}p\d+, the variant 'plain' is ruby 3\.1\.7p261/, error.message)
  end

  it "names a server gem whose version is not the one the bundle locks" do
    env = server_env
    server = start(variant.command, env, "sleep")
    error = assert_raises(Rackbench::IdentityMismatch) do
      check(server, expectation(variant, env, server_gem: "minitest", server_version: "0.0.1")).verify!
    end
    assert_match(/the bundle does not activate minitest/, error.message)
  end

  it "fails a server whose main process never reported, and one whose worker did not" do
    env = server_env
    server = start(variant.command, env, "File.write(#{File.join(@dir, "up").inspect}, 1); sleep", agent_first: false,
                                         reports: 0)
    wait_until(timeout_s: 30, message: "the server to start") { File.exist?(File.join(@dir, "up")) }
    error = assert_raises(Rackbench::IdentityMismatch) { check(server, expectation(variant, env)).verify! }
    assert_match(/main process \(#{server.pid}\) reported no identity/, error.message)

    # A worker forked before the agent could hook fork (as a server that
    # forked in C would): nothing proves what it runs.
    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))
    server = start(variant.command, env, "fork { sleep }; load #{Identity::AGENT.inspect}; sleep", agent_first: false)
    wait_until(timeout_s: 30, message: "the worker") { Rackbench::ProcessTree.pids(server.pid).size == 2 }
    error = assert_raises(Rackbench::IdentityMismatch) { check(server, expectation(variant, env)).verify! }
    assert_match(/process \d+ runs .* but reported no identity/, error.message)
  end

  it "asks every watching process, once ready, for ActiveRecord's pool, and flags one below the threads" do
    env = server_env(late: true)
    server = start(variant.command, env, "#{active_record(3)} fork { sleep }; sleep", reports: 2)

    record = check(server, expectation(variant, env, threads: 4)).verify!

    assert_equal 3, record["active_record_pool"]
    assert_equal [3, 3], record["processes"].map { |p| p["active_record_pool"] }
    assert_empty record["mismatches"], "a small pool is legal"
    assert_equal ["ActiveRecord's pool is 3 connections, below the 4 threads per process: threads wait for a " \
                  "connection (set the pool from RAILS_MAX_THREADS in config/database.yml)"], record["warnings"]
    assert File.exist?(File.join(Identity.directory(@dir), Identity::ASK_FILE))
  end

  it "flags nothing for a pool as large as the threads, an app without ActiveRecord, or one not loaded yet" do
    env = server_env(late: true)
    record = check(start(variant.command, env, "#{active_record(4)} sleep"), expectation(variant, env, threads: 4)).verify!
    assert_equal 4, record["active_record_pool"]
    assert_empty record["warnings"]

    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))
    record = check(start(variant.command, env, "sleep"), expectation(variant, env, threads: 4)).verify!
    assert_nil record["active_record_pool"]
    assert_empty record["warnings"]
    assert_equal 1, Identity.late_reports(Identity.directory(@dir)).size, "it answered, without a pool"

    # Registered for autoload, not loaded: the agent must not load it (the
    # path does not exist, so loading it would kill the answer).
    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))
    lazy = "module ActiveRecord; autoload :Base, '/nonexistent/active_record/base'; end; sleep"
    record = check(start(variant.command, env, lazy), expectation(variant, env, threads: 4)).verify!
    assert_nil record["active_record_pool"]
    assert_equal 1, Identity.late_reports(Identity.directory(@dir)).size
  end

  it "asks nothing of a process started without the late variable (a benchmark script)" do
    env = server_env
    record = check(start(variant.command, env, "#{active_record(1)} sleep"), expectation(variant, env, threads: 4)).verify!
    assert_nil record["active_record_pool"]
    assert_empty record["warnings"]
    refute File.exist?(File.join(Identity.directory(@dir), Identity::ASK_FILE))
  end

  it "checks the groups Bundler leaves out inside the server against the bundle's" do
    env = server_env
    bundler = "require 'bundler'; load #{Identity::AGENT.inspect}; sleep"
    record = check(start(variant.command, env, bundler, agent_first: false),
                   expectation(variant, env, bundle_without: [])).verify!
    assert_equal [], record["bundle_without"]

    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))
    error = assert_raises(Rackbench::IdentityMismatch) do
      check(start(variant.command, env, bundler, agent_first: false),
            expectation(variant, env, bundle_without: %w[development test])).verify!
    end
    assert_match(/Bundler leaves out no group, the bundle leaves out groups development, test/, error.message)

    FileUtils.rm_rf(Dir.glob(File.join(Identity.directory(@dir), "*")))
    error = assert_raises(Rackbench::IdentityMismatch) do
      check(start(variant.command, env, "sleep"), expectation(variant, env, bundle_without: %w[test])).verify!
    end
    assert_match(/Bundler is not loaded, the bundle leaves out groups test/, error.message)
  end

  it "records a program the app started with the same ruby as no server process" do
    env = server_env
    helper = "Process.spawn(#{RbConfig.ruby.inspect}, '-e', 'sleep'); sleep"
    server = start(variant.command, env, helper)
    wait_until(timeout_s: 30, message: "the helper") { Rackbench::ProcessTree.pids(server.pid).size == 2 }

    record = check(server, expectation(variant, env)).verify!

    assert_equal ["reported"], record["processes"].map { |p| p["source"] }
    assert_equal 1, record["others"].size
    assert_match(/ruby.* -e sleep/, record["others"].first["command"])
  end
end
