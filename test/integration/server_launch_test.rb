# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# Trial::Http::ServerLaunch with a real process: a tiny Ruby server
# (test/fixtures/tiny_server.rb) that loads the identity agent, as every
# server does through rackbench's launcher. The setup step, the server's
# command with the trial's options and environment, the identity check and
# the app check, and a clean stop.
describe Rackbench::Trial::Http::ServerLaunch do
  TINY_SERVER = File.expand_path("../fixtures/tiny_server.rb", __dir__)
  Http = Rackbench::Trial::Http

  # Boots tiny_server.rb in the mode named by the trial's "mode" option;
  # records what each command was built with.
  class TinyAdapter < Rackbench::Servers::Adapter
    OPTIONS = Rackbench::ServerOptions::Schema.new(
      Rackbench::ServerOptions::Option.new(key: "mode", type: Rackbench::ServerOptions::STRING, default: "ok",
                                           effect: "tiny_server.rb's mode", reaches: "argv")
    )

    def self.commands = (@commands ||= [])
    def name = "tiny"
    def server_gem = "tiny"
    def gem_lines(_ruby_engine) = []
    def supports = "test double"
    def option_schema = OPTIONS

    def command(port:, options: {}, environment: "production", **)
      self.class.commands << { options: options, environment: environment }
      [TINY_SERVER, port.to_s, options.fetch("mode", "ok")]
    end
  end
  # Registered only while each test runs: other tests list every adapter.
  # (One after block per describe: minitest's spec defines teardown, and a
  # second after would replace the first.)
  before { Rackbench::Servers.register(:tiny, TinyAdapter.new) }

  # The interpreter runs tiny_server.rb with the agent, as the launcher
  # runs a server's executable.
  Bundle = Struct.new(:gem_versions) do
    def exec_prefix(interpreter) = [*interpreter, "-r", Rackbench::Trial::Identity::AGENT]
    def bundle_variables = {}
  end

  let(:dir) { Dir.mktmpdir("rackbench-launch") }
  after do
    Rackbench::Servers.unregister(:tiny)
    FileUtils.rm_rf(dir)
  end

  let(:install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: RbConfig.ruby, source: :path, engine: "ruby",
                                   version: RUBY_VERSION, ruby_version: RUBY_VERSION, description: RUBY_DESCRIPTION,
                                   jit: [])
  end
  let(:variant) { Rackbench::Rubies::Variant.new(install: install, name: "ruby") }

  def trial(app_entry, options: {}, env: {})
    text = <<~YAML
      name: launch
      rubies: [ruby]
      servers: [{ name: tiny, options: #{JSON.generate(options)} }]
      apps: [#{app_entry}]
      env: #{JSON.generate(env)}
    YAML
    experiment = Rackbench::Experiment.parse(text, source: "launch.yml", base_dir: dir)
    Rackbench::Experiment::Plan.new(experiment).trials.first
  end

  def launch(trial, app_entry_env: {})
    config = trial.config
    app = Rackbench::App.resolve(config.app)
    work = File.join(dir, "work").tap { |d| FileUtils.mkdir_p(d) }
    env = Rackbench::Trial::ServerEnv.new(
      parent: ENV, bundle: Bundle.new({}), app_env: app.env.merge(app_entry_env), experiment_env: config.env,
      trial_env: { "RACKBENCH_TRIAL_DIR" => work, Rackbench::Trial::Identity::SERVER_GEM_VAR => "tiny" }
    )
    expectation = lambda do
      expected = Rackbench::Trial::Identity::Expectation
      expected.build(variant: variant, probe: expected.probe(variant, env),
                     env: env, server_gem: nil, server_version: nil)
    end
    Http::ServerLaunch.new(trial: trial, app: app, variant: variant, adapter: TinyAdapter.new, bundle: Bundle.new({}),
                           env: env, expectation: expectation,
                           layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                           work_dir: work, log_path: File.join(dir, "trial.log"), ready_timeout_s: 60,
                           stop_grace_s: 5, guard: [Rackbench::Trial::Kind::GUARD, Process.pid.to_s])
  end

  def boot(launch)
    booted = launch.boot
    yield booted
  ensure
    booted&.server&.stop
  end

  it "builds the server's command with the trial's options and RACK_ENV, proves what it runs, checks the app" do
    TinyAdapter.commands.clear
    entry = "{ name: rack-hello, load_path: /, expect_content_type: text/plain, expect_body: Hello }"
    boot(launch(trial(entry, options: { "mode" => "ok" }, env: { "RAILS_ENV" => "staging" }))) do |booted|
      assert booted.server.alive?
      assert_equal RUBY_DESCRIPTION.sub(" +YJIT", ""), booted.identity["description"]
      assert_equal %w[staging staging], booted.identity["env"].values_at("RACK_ENV", "RAILS_ENV")
      assert_equal [{ options: { "mode" => "ok" }, environment: "staging" }], TinyAdapter.commands
    end
  end

  it "runs the app's setup in the trial's directory before the server boots, logging its output" do
    entry = "{ name: rails-posts, load_path: /, expect_content_type: text/plain, expect_body: Hello }"
    boot(launch(trial(entry))) do |booted|
      assert booted.server.alive?
      assert_equal 1, Dir.glob(File.join(dir, "work", "rails-posts.sqlite3")).size
      log = File.read(File.join(dir, "trial.log"))
      assert_operator log.index("# setup: "), :<, log.index("rails-posts: seeded 50 authors, 1000 posts, 3000 replies")
      assert_operator log.index("rails-posts: seeded"), :<, log.index("tiny server listening")
      assert_equal ["exec"], booted.identity["processes"].map { |p| p["event"] }, "the setup reported nothing"
    end
  end

  it "fails with the error of a setup that fails, and never boots the server" do
    entry = "{ name: rails-posts, load_path: /, expect_content_type: text/plain, expect_body: Hello }"
    error = assert_raises(Rackbench::SetupError) do
      launch(trial(entry, env: { "RUBYOPT" => "-rrackbench_no_such_library" })).boot
    end
    assert_match(/\Aapp setup setup\.rb exited with status 1: .*rackbench_no_such_library/, error.message)
    refute_match(/tiny server listening/, File.read(File.join(dir, "trial.log")))
  end

  it "refuses an app whose answer has the wrong content type or body, and stops its server" do
    entry = "{ name: rack-hello, load_path: /, expect_content_type: text/html }"
    error = assert_raises(Rackbench::SetupError) { launch(trial(entry)).boot }
    assert_match(%r{content type "text/plain", expected "text/html"}, error.message)

    entry = "{ name: rack-hello, load_path: /, expect_body: Hello }"
    error = assert_raises(Rackbench::SetupError) { launch(trial(entry, options: { "mode" => "wrong" })).boot }
    assert_includes error.message, 'body lacks "Hello"'
    assert_empty `pgrep -f #{TINY_SERVER}`.split, "nothing left running"
  end

  # mix's login captures the form's token: a server without a login form
  # fails the session check, with the reason, and is stopped.
  it "runs the session check of an app with expect_session_body and a request list, failing the trial" do
    entry = "{ name: mix, load_path: /, expect_content_type: text/plain, expect_body: Hello }"
    error = assert_raises(Rackbench::SetupError) { launch(trial(entry)).boot }
    assert_equal "session check failed: first entry login-form got capture error x 1", error.message
    assert_empty `pgrep -f #{TINY_SERVER}`.split, "nothing left running"
  end

  it "names a server that exits before it is ready" do
    error = assert_raises(Rackbench::SetupError) { launch(trial("rack-hello", options: { "mode" => "exit" })).boot }
    assert_match(/\Aserver exited with status 3 before it was ready/, error.message)
  end
end
