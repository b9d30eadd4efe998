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

  def server_env(ruby_env: {}, experiment_env: {})
    Rackbench::Trial::ServerEnv.new(
      parent: ENV, bundle: Struct.new(:bundle_variables).new({}), ruby_env: ruby_env, experiment_env: experiment_env,
      trial_env: { "RACKBENCH_TRIAL_DIR" => @dir, Identity::SERVER_GEM_VAR => "minitest" }
    )
  end

  def expectation(variant, env, server_gem: nil, server_version: nil)
    Identity::Expectation.build(variant: variant, probe: Identity::Expectation.probe(variant, env), env: env,
                                server_gem: server_gem, server_version: server_version)
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
