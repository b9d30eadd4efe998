# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# The runner's orchestration with fakes: a tiny Ruby server as the app
# server, a fake bundle, and a fake engine object returning a canned result.
# Real servers and the real engine are in test/integration/runner_test.rb.
module RunnerTestSupport
  TINY_SERVER = File.expand_path("../fixtures/tiny_server.rb", __dir__)
  ENGINE_RESULT = JSON.parse(File.read(File.expand_path("../fixtures/engine_result.json", __dir__))).freeze

  # The app server adapter of these tests: boots tiny_server.rb in the mode
  # named by its label (servers: [{name: fake, label: ok}] ...).
  # Its one option, "multi", lifts its limit of one process; #commands
  # records the options and environment each command was built with.
  class FakeAdapter < Rackbench::Servers::Adapter
    OPTIONS = Rackbench::ServerOptions::Schema.new(
      Rackbench::ServerOptions::Option.new(key: "multi", type: Rackbench::ServerOptions::BOOLEAN, default: "false",
                                           effect: "allows processes > 1", reaches: "recorded")
    )

    def self.commands = (@commands ||= [])
    def name = "fake"
    def server_gem = "fake"
    def gem_lines(_ruby_engine) = []
    def supports = "test double"
    def option_schema = OPTIONS

    def command(port:, **keywords)
      self.class.commands << keywords.slice(:options, :environment)
      [TINY_SERVER, port.to_s, Thread.current[:tiny_mode] || "ok"]
    end

    private

    def own_limits(processes:, options:, **)
      "fake runs a single process" if processes > 1 && !options["multi"]
    end
  end
  Rackbench::Servers.register(:fake, FakeAdapter.new)

  # Runs the tiny server with the test's own ruby, whatever the variant,
  # with the identity agent that rackbench's launcher loads into servers.
  FakeBundle = Struct.new(:prefix, :env, :gem_versions) do
    def exec_prefix(_interpreter = nil) = prefix
    def bundle_variables = env
  end
  class FakeBundles
    # :before_agent :: scripts the fake server loads before the identity agent
    def initialize(before_agent: [])
      @before_agent = before_agent
    end

    def fetch(*, **)
      FakeBundle.new([RbConfig.ruby, *@before_agent.flat_map { |f| ["-r", f] }, "-r", Rackbench::Runner::Identity::AGENT],
                     {}, { "tiny" => "1.0" })
    end
  end

  # Returns the canned result; raises Interrupt on call number interrupt_at.
  class FakeEngine
    attr_reader :calls, :settings

    def initialize(interrupt_at: nil, result: ENGINE_RESULT)
      @interrupt_at = interrupt_at
      @result = result
      @calls = 0
      @settings = []
    end

    def run(settings, env: {})
      @calls += 1
      @settings << settings
      raise Interrupt if @calls == @interrupt_at

      Rackbench::LoadResult.new(JSON.parse(JSON.generate(@result)))
    end
  end
end

describe Rackbench::Runner do
  include RunnerTestSupport

  let(:dir) { Dir.mktmpdir }
  let(:out) { StringIO.new }
  let(:install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: RbConfig.ruby, source: :path, engine: "ruby",
                                   version: RUBY_VERSION, ruby_version: RUBY_VERSION, description: RUBY_DESCRIPTION,
                                   jit: ["yjit"])
  end

  after { FileUtils.rm_rf(dir) }

  def experiment(extra = "")
    Rackbench::Experiment.parse(<<~YAML, source: "test.yml", base_dir: dir)
      name: runner-test
      seed: 3
      batches: 2
      rubies: [ruby]
      servers: [fake]
      apps: [rack-hello]
      processes: [1, 2]
      threads: [1, 4]
      load: { duration: 0.1s, warmup: 0s, connections: 4 }
      #{extra}
    YAML
  end

  def runner(engine: RunnerTestSupport::FakeEngine.new, resume: false, fail_fast: false, exp: experiment,
             bundles: RunnerTestSupport::FakeBundles.new)
    Rackbench::Runner.new(experiment: exp, results_dir: dir, resume: resume, fail_fast: fail_fast, out: out,
                          err: StringIO.new, engine: engine, installs: [install],
                          bundles: bundles,
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0.3)
  end

  def stored_trials
    Rackbench::Store.open(dir) { |store| store.trials(nil, engine_result: false) }
  end

  it "runs every supported trial once, stores each, and says what it skipped up front" do
    summary = runner.run
    assert_equal 4, summary.ok # threads [1, 4] x batches 2; processes 2 unsupported
    assert_equal 0, summary.failed
    assert_equal 2, summary.skipped
    trials = stored_trials
    assert_equal 4, trials.size
    assert_equal trials.map { |t| t[:key] }.uniq.size, trials.size
    assert(trials.all? { |t| t[:status] == "ok" && t[:rps] == 200.0 && t[:boot_s].positive? })
    assert_match(/skipped: .*processes=2.*fake runs a single process/, out.string)
    assert_equal({ "tiny" => "1.0" }, trials.first[:gem_versions])
  end

  it "gives the adapter the server's options when planning and when building each command" do
    RunnerTestSupport::FakeAdapter.commands.clear
    text = experiment.source_text.sub("servers: [fake]", "servers: [{ name: fake, options: { multi: true } }]")
    exp = Rackbench::Experiment.parse(text, source: "test.yml", base_dir: dir)
    summary = runner(exp: exp).run
    assert_equal [8, 0], [summary.ok, summary.skipped], "multi lifts the one-process limit"
    assert_equal [{ options: { "multi" => true }, environment: "production" }] * 8,
                 RunnerTestSupport::FakeAdapter.commands
  end

  it "runs batch by batch in the seeded order" do
    engine = RunnerTestSupport::FakeEngine.new
    runner(engine: engine).run
    assert_equal [1, 1, 2, 2], stored_trials.sort_by { |t| t[:position] }.map { |t| t[:batch] }
    # The engine's request mix is seeded per batch.
    assert_equal [4, 4, 5, 5], engine.settings.map(&:seed)
  end

  it "resumes after an interruption without redoing or duplicating a trial" do
    assert_raises(Rackbench::Interrupted) { runner(engine: RunnerTestSupport::FakeEngine.new(interrupt_at: 3)).run }
    assert_equal 2, stored_trials.size
    error = assert_raises(Rackbench::UsageError) { runner.run }
    assert_match(/already holds 2 trials.*--resume/, error.message)

    engine = RunnerTestSupport::FakeEngine.new
    summary = runner(engine: engine, resume: true).run
    assert_equal 2, engine.calls
    assert_equal 2, summary.already_done
    trials = stored_trials
    assert_equal 4, trials.size
    assert_equal 4, trials.map { |t| t[:key] }.uniq.size
    statuses = Rackbench::Store.open(dir) { |store| store.runs.map { |r| r[:status] } }
    assert_equal %w[interrupted finished], statuses
  end

  it "records a server that never starts as a failed trial, with its log, and goes on" do
    Thread.current[:tiny_mode] = "exit"
    summary = runner.run
    assert_equal 4, summary.failed
    trials = stored_trials
    assert(trials.all? { |t| t[:status] == "failed" && t[:reason].match?(/exited with status 3 before it was ready/) })
    assert(trials.all? { |t| File.exist?(t[:log_path]) })
  ensure
    Thread.current[:tiny_mode] = nil
  end

  it "refuses to benchmark an app that answers wrongly" do
    Thread.current[:tiny_mode] = "wrong"
    runner.run
    assert(stored_trials.all? { |t| t[:reason].to_s.include?("body lacks \"Hello, World!\"") })
  ensure
    Thread.current[:tiny_mode] = nil
  end

  it "stops at the first failure with --fail-fast" do
    Thread.current[:tiny_mode] = "exit"
    error = assert_raises(Rackbench::Error) { runner(fail_fast: true).run }
    assert_match(/--fail-fast/, error.message)
    assert_equal 1, stored_trials.size
  ensure
    Thread.current[:tiny_mode] = nil
  end

  it "fails a trial whose error rate is too high, keeping its measurement" do
    result = JSON.parse(JSON.generate(RunnerTestSupport::ENGINE_RESULT))
    result["errors"]["timeout"] = 40
    runner(engine: RunnerTestSupport::FakeEngine.new(result: result)).run
    trials = Rackbench::Store.open(dir) { |store| store.trials }
    assert(trials.all? { |t| t[:status] == "failed" && t[:reason].match?(/error rate 9.09% above 1.00%/) })
    assert_equal 400, trials.first[:engine_result]["requests"]
  end

  it "kills a server that ignores TERM and leaves no process behind" do
    Thread.current[:tiny_mode] = "stubborn"
    summary = runner.run
    assert_equal 4, summary.ok
    leftovers = `pgrep -f #{RunnerTestSupport::TINY_SERVER}`.split
    assert_empty leftovers
  ensure
    Thread.current[:tiny_mode] = nil
  end

  it "stores what really ran with every trial: the identity its server reported" do
    runner.run
    trials = stored_trials
    assert(trials.all? { |t| t[:identity]["exe"] == File.realpath(RbConfig.ruby) && t[:identity]["mismatches"] == [] })
    assert(trials.all? { |t| t[:ruby_description] == t[:identity]["description"] })
    assert_equal [["production", "production"]], trials.map { |t| t[:identity]["env"].values_at("RACK_ENV", "RAILS_ENV") }.uniq
    assert(trials.all? { |t| t[:identity]["processes"].size == 1 })
  end

  it "fails a trial whose server does not run what its label names, and stores what it ran" do
    exp = experiment.then do |base|
      Rackbench::Experiment.parse(base.source_text.sub("rubies: [ruby]", "rubies: [{ name: with-x, ruby: ruby, env: { X: \"1\" } }]"),
                                  source: "test.yml", base_dir: dir)
    end
    fixture = File.expand_path("../fixtures/identity/unset_x.rb", __dir__)
    summary = runner(exp: exp, bundles: RunnerTestSupport::FakeBundles.new(before_agent: [fixture])).run
    assert_equal 0, summary.ok
    trials = stored_trials
    assert(trials.all? { |t| t[:reason].match?(/\Aidentity check failed: main process \d+: X is unset, the trial sets 1\z/) },
           trials.map { |t| t[:reason] }.inspect)
    assert(trials.all? { |t| t[:identity]["env"] == { "RACK_ENV" => "production", "RAILS_ENV" => "production", "X" => nil } })
    assert(trials.all? { |t| t[:identity]["mismatches"].size == 1 })
  end
end
