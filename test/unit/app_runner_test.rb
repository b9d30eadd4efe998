# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# What the runner does with an app's manifest: the setup step before the
# server boots, the engines it runs on, the content type check, its own
# error allowance, its request list. A tiny Ruby server stands in for the
# app server and a fake engine returns a canned result, as in
# runner_test.rb.
module AppRunnerTestSupport
  TINY_SERVER = File.expand_path("../fixtures/tiny_server.rb", __dir__)
  ENGINE_RESULT = JSON.parse(File.read(File.expand_path("../fixtures/engine_result.json", __dir__))).freeze

  # Boots tiny_server.rb, which answers "Hello, World!" as text/plain.
  class Adapter < Rackbench::Servers::Adapter
    def name = "fake-apps"
    def server_gem = "fake-apps"
    def gem_lines(_ruby_engine) = []
    def supports = "test double"

    def command(port:, **)
      [TINY_SERVER, port.to_s, "ok"]
    end
  end
  Rackbench::Servers.register(:"fake-apps", Adapter.new)

  # Runs the tiny server with the test's own ruby, whatever the variant,
  # with the identity agent that rackbench's launcher loads into servers.
  Bundle = Struct.new(:prefix, :env, :gem_versions) do
    def exec_prefix(_interpreter = nil) = prefix
    def bundle_variables = env
  end
  class Bundles
    def fetch(*, **)
      Bundle.new([RbConfig.ruby, "-r", Rackbench::Runner::Identity::AGENT], {}, {})
    end
  end

  class Engine
    attr_reader :settings

    def initialize(result)
      @result = result
      @settings = []
    end

    def run(settings, env: {})
      @settings << settings
      Rackbench::LoadResult.new(JSON.parse(JSON.generate(@result)))
    end
  end
end

describe "the runner with built-in apps" do
  let(:dir) { Dir.mktmpdir }

  after { FileUtils.rm_rf(dir) }

  def install(engine)
    Rackbench::Rubies::Install.new(name: engine, path: RbConfig.ruby, source: :path, engine: engine,
                                   version: RUBY_VERSION, ruby_version: RUBY_VERSION, description: RUBY_DESCRIPTION,
                                   jit: [])
  end

  # The tiny server answers "Hello, World!" as text/plain: each built-in
  # app's check is overridden to that.
  def run_apps(apps, **options)
    entries = apps.map { |name| "{ name: #{name}, load_path: /, expect_content_type: text/plain, expect_body: Hello }" }
    run_entries(entries, **options)
  end

  def run_entries(entries, ruby: "ruby", result: AppRunnerTestSupport::ENGINE_RESULT, extra: "",
                  load: "{ duration: 0.1s, warmup: 0s, connections: 2 }")
    experiment = Rackbench::Experiment.parse(<<~YAML, source: "test.yml", base_dir: dir)
      name: app-runner-test
      rubies: [#{ruby}]
      servers: [fake-apps]
      apps: [#{entries.join(", ")}]
      load: #{load}
      #{extra}
    YAML
    @engine = AppRunnerTestSupport::Engine.new(result)
    runner = Rackbench::Runner.new(experiment: experiment, results_dir: dir, out: StringIO.new, err: StringIO.new,
                                   engine: @engine, installs: [install(ruby)],
                                   bundles: AppRunnerTestSupport::Bundles.new,
                                   layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                                   environment: { "test" => true }, stop_grace_s: 0.3)
    @runner = runner
    runner.run
    Rackbench::Store.open(dir) { |store| store.trials(nil, engine_result: false) }
  end

  it "runs the app's setup in the trial's directory before the server boots, logging its output" do
    trial = run_apps(%w[rails-posts]).first
    assert_equal "ok", trial[:status], trial[:reason]
    database = Dir.glob(File.join(dir, "work", "*", "rails-posts.sqlite3"))
    assert_equal 1, database.size
    assert_match(/rails-posts-fake-apps-ruby-p1-t1-b1/, database.first)
    log = File.read(trial[:log_path])
    setup_at = log.index("# setup: ")
    assert setup_at, log
    assert_operator setup_at, :<, log.index("rails-posts: seeded 50 authors, 1000 posts, 3000 replies")
    assert_operator log.index("rails-posts: seeded"), :<, log.index("tiny server listening")
  end

  it "fails the trial with the tail of a setup that fails, and never boots the server" do
    trial = run_apps(%w[rails-posts], extra: "env: { RUBYOPT: -rrackbench_no_such_library }").first
    assert_equal "failed", trial[:status]
    assert_match(/\Aapp setup setup\.rb exited with status 1: .*rackbench_no_such_library/m, trial[:reason])
    refute_match(/tiny server listening/, File.read(trial[:log_path]))
  end

  it "leaves an app out of the plan on a ruby engine it does not support, with the reason" do
    assert_empty run_apps(%w[rails-posts], ruby: "jruby")
    assert_equal ["app rails-posts runs on ruby only (not jruby)"], @runner.plan.skipped.map(&:reason)
  end

  it "fails a trial with more than 1% of responses 500, unless the app allows more" do
    result = JSON.parse(JSON.generate(AppRunnerTestSupport::ENGINE_RESULT))
    result["status"] = { "200" => 380, "500" => 20 }
    trials = run_apps(%w[rack-hello errors], result: result).to_h { |t| [t[:app], t] }
    assert_equal "failed", trials["rack-hello"][:status]
    assert_equal 'error rate 5.00% above 1.00% ({"500"=>20})', trials["rack-hello"][:reason]
    assert_equal "ok", trials["errors"][:status], trials["errors"][:reason]
  end

  it "loads a variant with its request list and a cookie jar per connection" do
    run_apps(%w[mix rails-posts])
    by_file = @engine.settings.group_by(&:requests_file)
    mix = by_file.fetch(Rackbench::Apps.builtin("mix").requests).first
    assert mix.cookies
    plain = by_file.fetch(nil).first
    refute plain.cookies
  end

  it "keeps cookies per connection for a request list from the experiment file, unless load.cookies says false" do
    list = File.join(dir, "session.requests")
    File.write(list, "--- first name=login\nPOST /login\n\nuser=a\n--- name=home\nGET /\n")
    base = "duration: 0.1s, warmup: 0s, connections: 2"
    run_apps(%w[rack-hello], load: "{ #{base}, requests: session.requests }")
    assert_equal [[list, true]], @engine.settings.map { |s| [s.requests_file, s.cookies] }

    FileUtils.rm_rf(Dir.glob(File.join(dir, "*.db*")))
    run_apps(%w[rack-hello], load: "{ #{base}, requests: session.requests, cookies: false }")
    assert_equal [[list, false]], @engine.settings.map { |s| [s.requests_file, s.cookies] }

    FileUtils.rm_rf(Dir.glob(File.join(dir, "*.db*")))
    run_apps(%w[rack-hello], load: "{ #{base}, cookies: true }")
    assert_equal [[nil, true]], @engine.settings.map { |s| [s.requests_file, s.cookies] }, "a single URL on request"
  end

  it "checks the content type of the app's answer" do
    trial = run_entries(["{ name: rack-hello, expect_content_type: text/html }"]).first
    assert_equal "failed", trial[:status]
    assert_match(%r{content type "text/plain", expected "text/html"}, trial[:reason])
  end
end
