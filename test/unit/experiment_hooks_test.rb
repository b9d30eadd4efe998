# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

# apps[].setup and apps[].reset in the experiment file: a command line or a
# mapping of command and timeout, for the user's own app only; each
# mistake one line naming the key.
describe "Rackbench::Experiment app hooks" do
  include Rackbench::Test::ExperimentSupport

  def app(**keys)
    build_experiment("apps" => [{ "name" => "mine", "path" => "myapp", **keys.transform_keys(&:to_s) }]).apps.first
  end

  it "takes a command line with the default deadline, or a command and a timeout" do
    mine = app(setup: "bin/rails db:prepare", reset: { "command" => "cp db/a db/b", "timeout" => "30s" })
    assert_equal ["bin/rails db:prepare", 600.0], mine.setup.to_a
    assert_equal ["cp db/a db/b", 30.0], mine.reset.to_a
    assert_equal ["bundle exec rake db:seed:replant", 120.0], app(reset: "bundle exec rake db:seed:replant").reset.to_a
  end

  it "leaves both unset when not given, and the fingerprint as it was" do
    mine = app
    assert_nil mine.setup
    assert_nil mine.reset
    without = build_experiment("apps" => [{ "name" => "mine", "path" => "myapp" }])
    with = build_experiment("apps" => [{ "name" => "mine", "path" => "myapp", "reset" => "cp a b" }])
    refute_includes without.canonical["apps"].first.keys, "reset"
    refute_equal without.fingerprint, with.fingerprint, "a reset changes what is measured"
  end

  it "rejects what is not a command, naming the key" do
    assert_config_error({ "apps" => [{ "name" => "mine", "path" => "myapp", "setup" => 3 }] },
                        "apps[0].setup.command: must be a string")
    assert_config_error({ "apps" => [{ "name" => "mine", "path" => "myapp", "reset" => " " }] },
                        "apps[0].reset.command: is empty")
    assert_config_error({ "apps" => [{ "name" => "mine", "path" => "myapp", "reset" => "cp 'a b" }] },
                        "apps[0].reset.command: \"cp 'a b\": Unmatched quote")
    assert_config_error({ "apps" => [{ "name" => "mine", "path" => "myapp", "reset" => { "command" => "x", "timout" => "1s" } }] },
                        "apps[0].reset", "timout")
    assert_config_error({ "apps" => [{ "name" => "mine", "path" => "myapp", "reset" => { "command" => "x", "timeout" => "0s" } }] },
                        "apps[0].reset.timeout: must be more than 0")
  end

  it "refuses hooks on a built-in app" do
    assert_config_error({ "apps" => [{ "name" => "rack-hello", "reset" => "cp a b" }] },
                        "apps[0].reset: runs your own app's command: give the app a path")
  end
end
