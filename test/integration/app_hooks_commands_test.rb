# frozen_string_literal: true

require "test_helper"
require "ostruct"

# The user's app's hooks (Trial::Http::AppHooks): which command line runs
# how, setup once per Bundler environment, reset before every trial, their
# logs, deadlines and failures. The commands here are tiny programs (sh);
# the launcher's path is exercised in test/integration/app_hooks_test.rb.
describe Rackbench::Trial::Http::AppHooks do
  HOOKS_CLASS = Rackbench::Trial::Http::AppHooks
  HOOK_SPEC = Rackbench::Experiment::Hook

  let(:dir) { Dir.mktmpdir("rackbench-hooks") }
  let(:app_dir) { File.join(dir, "app").tap { |d| FileUtils.mkdir_p(File.join(d, "bin")) } }
  let(:logs_dir) { File.join(dir, "logs").tap { |d| FileUtils.mkdir_p(d) } }
  let(:bundle) { Struct.new(:prefix) { def exec_prefix(_command) = prefix }.new(%w[ruby launcher.rb]) }
  let(:install) { OpenStruct.new(name: "ruby", path: "/usr/bin/ruby") }
  let(:variant) { OpenStruct.new(install: install, command: ["/usr/bin/ruby"]) }
  let(:puma) { OpenStruct.new(name: "puma") }
  let(:env) { { "PATH" => ENV.fetch("PATH"), "RAILS_ENV" => "production" } }
  after { FileUtils.rm_rf(dir) }

  def app(setup: nil, reset: nil)
    Rackbench::App.new(name: "mine", dir: app_dir, setup_hook: setup && HOOK_SPEC.new(command: setup, timeout_s: 30),
                       reset_hook: reset && HOOK_SPEC.new(command: reset, timeout_s: 30))
  end

  def trial_dir(name)
    File.join(dir, "work", name).tap { |d| FileUtils.mkdir_p(d) }
  end

  def before_trial(hooks, app, work_dir, adapter: puma)
    hooks.before_trial(app: app, bundle: bundle, variant: variant, adapter: adapter, env: env, work_dir: work_dir)
  end

  describe ".argv" do
    it "runs bundle exec and the app's Ruby scripts through the launcher, anything else as the program" do
      File.write(File.join(app_dir, "bin", "rails"), "#!/usr/bin/env ruby\nputs 1\n")
      File.write(File.join(app_dir, "seed.rb"), "puts 1\n")
      File.write(File.join(app_dir, "bin", "restore"), "#!/bin/sh\ncp a b\n")
      prefix = %w[ruby --yjit launcher.rb]
      argv = ->(command) { HOOKS_CLASS.argv(command, app_dir: app_dir, exec_prefix: prefix) }
      assert_equal prefix + ["#{app_dir}/bin/rails", "db:prepare"], argv.call("bin/rails db:prepare")
      assert_equal prefix + ["#{app_dir}/seed.rb"], argv.call("seed.rb")
      assert_equal prefix + ["#{app_dir}/seed.rb", "x"], argv.call("ruby seed.rb x"), "the variant's ruby, not PATH's"
      assert_equal prefix + ["#{app_dir}/seed.rb"], argv.call("bundle exec ruby seed.rb")
      assert_equal %w[ruby -e 1], argv.call("ruby -e 1"), "no script to run through the launcher: as written"
      assert_equal prefix + %w[rake db:seed:replant], argv.call("bundle exec rake db:seed:replant")
      assert_equal %w[bin/restore], argv.call("bin/restore"), "a shell script is a program"
      assert_equal ["cp", "db/bench copy.sqlite3", "db/production.sqlite3"],
                   argv.call("cp 'db/bench copy.sqlite3' db/production.sqlite3")
      assert_equal ["sh", "-c", "a && b"], argv.call("sh -c 'a && b'")
    end
  end

  it "runs the setup once per environment and the reset before every trial, each logged, in the app's directory" do
    hooks = HOOKS_CLASS.new(logs_dir: logs_dir)
    mine = app(setup: "sh -c 'echo set up in $PWD as $RAILS_ENV; echo x >> setups'",
               reset: "sh -c 'echo resetting; echo x >> resets'")
    first = before_trial(hooks, mine, trial_dir("t1"))
    second = before_trial(hooks, mine, trial_dir("t2"))
    other_server = before_trial(hooks, mine, trial_dir("t3"), adapter: OpenStruct.new(name: "unicorn"))
    assert_equal 2, File.readlines(File.join(app_dir, "setups")).size, "once for puma, once for unicorn"
    assert_equal 3, File.readlines(File.join(app_dir, "resets")).size
    assert_equal %w[reset setup], first.keys.sort
    assert_equal %w[reset], second.keys, "the setup already ran for this environment"
    assert_equal %w[reset setup], other_server.keys.sort
    setup_log = File.join(logs_dir, "setup-mine-ruby-puma.log")
    assert_equal setup_log, first["setup"]["log"]
    assert_includes File.read(setup_log), "set up in #{app_dir} as production"
    assert_equal File.join(dir, "work", "t2", "reset.log"), second["reset"]["log"]
    assert_includes File.read(second["reset"]["log"]), "resetting"
    assert_kind_of Float, second["reset"]["duration_s"]
    assert_equal mine.reset_hook.command, second["reset"]["command"]
  end

  it "runs nothing for an app without hooks" do
    assert_equal({}, before_trial(HOOKS_CLASS.new(logs_dir: logs_dir), app, trial_dir("t1")))
    assert_empty Dir.children(logs_dir)
    refute File.exist?(File.join(dir, "work", "t1", "reset.log"))
  end

  it "fails every trial of an environment whose setup failed, quoting the error, without running it again" do
    hooks = HOOKS_CLASS.new(logs_dir: logs_dir)
    failing = app(setup: "sh -c 'echo x >> setups; echo \"ActiveRecord::NoDatabaseError: database missing\" >&2; " \
                         "echo \"  from bin/rails:4:in main\" >&2; exit 3'",
                  reset: "sh -c 'echo x >> resets'")
    errors = Array.new(2) { assert_raises(Rackbench::SetupError) { before_trial(hooks, failing, trial_dir("t")) } }
    assert_match(/\Aapp setup `sh -c .*` exited with status 3: ActiveRecord::NoDatabaseError: database missing \(log: .*setup-mine-ruby-puma.log\)$/,
                 errors.first.message.lines.first)
    assert_same errors.first, errors.last
    assert_equal 1, File.readlines(File.join(app_dir, "setups")).size
    refute File.exist?(File.join(app_dir, "resets")), "no reset after a failed setup"
  end

  it "fails the trial whose reset fails or runs past its deadline, naming the reset" do
    hooks = HOOKS_CLASS.new(logs_dir: logs_dir)
    error = assert_raises(Rackbench::SetupError) { before_trial(hooks, app(reset: "sh -c 'echo no copy >&2; exit 1'"), trial_dir("t")) }
    assert_match(/\Aapp reset `sh -c .*` exited with status 1: no copy \(log: .*reset.log\)$/, error.message.lines.first)
    slow = Rackbench::App.new(name: "mine", dir: app_dir, reset_hook: HOOK_SPEC.new(command: "sleep 30", timeout_s: 0.2))
    error = assert_raises(Rackbench::SetupError) { before_trial(hooks, slow, trial_dir("t")) }
    assert_match(/\Aapp reset `sleep 30` timed out after 0.20s: /, error.message)
    error = assert_raises(Rackbench::SetupError) { before_trial(hooks, app(reset: "no-such-program-here"), trial_dir("t")) }
    assert_match(/\Acannot run the reset of mine \(`no-such-program-here`\): No such file/, error.message)
  end
end
