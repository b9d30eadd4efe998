# frozen_string_literal: true

require "test_helper"

# LoadEngine against a fake engine (test/fixtures/fake_engine): argv,
# every outcome of the child, the watchdog and Ctrl-C.
describe Rackbench::LoadEngine do
  let(:fake) { File.expand_path("../fixtures/fake_engine", __dir__) }
  let(:result_json) { File.expand_path("../fixtures/engine_result.json", __dir__) }

  let(:dir) { Dir.mktmpdir }
  let(:argv_file) { File.join(dir, "argv") }
  let(:settings) { Rackbench::LoadSettings.build(url: "http://127.0.0.1:9/x", duration_s: 0.1, timeout_s: 0.1) }

  before do
    ENV["FAKE_ENGINE_RESULT"] = result_json
    ENV["FAKE_ENGINE_ARGV"] = argv_file
  end

  after do
    %w[FAKE_ENGINE_MODE FAKE_ENGINE_RESULT FAKE_ENGINE_ARGV FAKE_ENGINE_READY].each { |k| ENV.delete(k) }
    FileUtils.rm_rf(dir)
  end

  def engine(**options)
    Rackbench::LoadEngine.new(binary: fake, **options)
  end

  it "builds an argv with every setting, never a shell string" do
    s = Rackbench::LoadSettings.build(
      url: "http://127.0.0.1:8080/p?q=1", connections: 50, threads: 2, duration_s: 10, warmup_s: 2.5,
      rate: 1000, keepalive: false, headers: ["Connection: close", "X-A: b c"], method: "POST", body: "a=1",
      timeout_s: 0.25, cookies: true, cookie_presets: ["sid=a/b=", "theme=dark"], seed: 7, raw_file: "/tmp/raw.csv",
      cpus: [1], allow_remote: true
    )
    assert_equal [fake, "-c", "50", "-t", "2", "-d", "10s", "-w", "2500000us", "--timeout", "250000us",
                  "--seed", "7", "--rate", "1000", "--no-keepalive", "-H", "Connection: close", "-H", "X-A: b c",
                  "-m", "POST", "--body", "a=1", "--cookies", "--cookie", "sid=a/b=", "--cookie", "theme=dark",
                  "--raw", "/tmp/raw.csv", "--cpus", "1", "--allow-remote", "http://127.0.0.1:8080/p?q=1"], engine.argv(s)
    plain = Rackbench::LoadSettings.build(url: "http://127.0.0.1:8080/")
    refute_includes engine.argv(plain), "--cookie"
    refute_includes engine.argv(plain), "-H"
  end

  it "passes a fixed count instead of a duration, and a warmup's count instead of its time" do
    argv = engine.argv(Rackbench::LoadSettings.build(url: "http://127.0.0.1:8080/", count: 500, warmup_s: 1))
    assert_equal ["--count", "500"], argv[argv.index("--count"), 2]
    refute_includes argv, "-d"
    argv = engine.argv(Rackbench::LoadSettings.build(url: "http://127.0.0.1:8080/", count: 500, warmup_count: 900))
    assert_equal ["--warmup-count", "900"], argv[argv.index("--warmup-count"), 2]
    refute_includes argv, "-w"
    assert_raises(Rackbench::UsageError) { Rackbench::LoadSettings.build(url: "http://127.0.0.1:8080/", warmup_count: 9) }
  end

  it "holds a fixed count's edges until its phase callback returned, and only a fixed count's" do
    calls = []
    engine.run(Rackbench::LoadSettings.build(url: "http://127.0.0.1:9/x", count: 5, timeout_s: 0.1),
               on_phase: ->(phase) { calls << phase })
    argv = File.read(argv_file).lines.map(&:chomp)
    assert_equal %w[--phase-fd 3 --hold-fd 4], argv[argv.index("--phase-fd"), 4]
    engine.run(settings, on_phase: ->(phase) { calls << phase })
    refute_includes File.read(argv_file), "--hold-fd"
  end

  it "refuses a cookie preset that is not name=value" do
    ["novalue", "a b=c", "a=b; c=d", "=v", "a=b\n"].each do |bad|
      error = assert_raises(Rackbench::UsageError) do
        Rackbench::LoadSettings.build(url: "http://127.0.0.1:8080/", cookie_presets: [bad])
      end
      assert_match(/invalid cookie .* \(expected 'name=value'\)/, error.message)
    end
  end

  it "returns the validated result and passes the argv through" do
    result = engine.run(settings)
    assert_equal 400, result.requests
    assert_in_delta 200.0, result.rps
    assert_equal "http://127.0.0.1:9/x", File.read(argv_file).lines.last
  end

  it "turns the engine's usage error into one UsageError line" do
    ENV["FAKE_ENGINE_MODE"] = "usage"
    error = assert_raises(Rackbench::UsageError) { engine.run(settings) }
    assert_equal "invalid --connections '0' (expected an integer >= 1)", error.message
  end

  it "reports a failing engine with its last line" do
    ENV["FAKE_ENGINE_MODE"] = "fail"
    error = assert_raises(Rackbench::EngineError) { engine.run(settings) }
    assert_match(/Too many open files/, error.message)
  end

  it "reports a crash by signal" do
    ENV["FAKE_ENGINE_MODE"] = "crash"
    error = assert_raises(Rackbench::EngineError) { engine.run(settings) }
    assert_match(/killed by signal SEGV/, error.message)
  end

  it "rejects output that is not JSON" do
    ENV["FAKE_ENGINE_MODE"] = "garbage"
    error = assert_raises(Rackbench::EngineError) { engine.run(settings) }
    assert_match(/invalid JSON/, error.message)
  end

  it "kills an engine that overruns its deadline" do
    ENV["FAKE_ENGINE_MODE"] = "hang"
    error = assert_raises(Rackbench::EngineError) { engine(deadline_slack_s: 0.3).run(settings) }
    assert_match(/killed by signal KILL \(it overran its deadline\)/, error.message)
  end

  it "stops the engine on Ctrl-C and hands back its partial result" do
    ENV["FAKE_ENGINE_MODE"] = "term"
    ready = File.join(dir, "ready")
    ENV["FAKE_ENGINE_READY"] = ready
    main = Thread.current
    poker = Thread.new do
      wait_until(message: "fake engine ready") { File.exist?(ready) }
      main.raise(Interrupt)
    end
    error = assert_raises(Rackbench::Interrupted) { engine.run(settings) }
    poker.join
    assert error.partial_result.interrupted?
    assert_equal 400, error.partial_result.requests
  end

  it "says how to build a missing engine" do
    error = assert_raises(Rackbench::EngineError) { Rackbench::LoadEngine.new(binary: "/nonexistent").run(settings) }
    assert_match(%r{not found at /nonexistent: run bin/setup}, error.message)
  end
end
