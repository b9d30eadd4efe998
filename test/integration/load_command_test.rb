# frozen_string_literal: true

require "test_helper"
require "json"

# `rackbench load` to its end, with the fake engine (test/fixtures/fake_engine)
# in a process of its own; its options and errors are unit tests
# (test/unit/load_result_test.rb).
describe "rackbench load (command)" do
  it "prints the engine's JSON or the summary" do
    env = { "RACKBENCH_ENGINE" => File.expand_path("../fixtures/fake_engine", __dir__),
            "FAKE_ENGINE_RESULT" => File.expand_path("../fixtures/engine_result.json", __dir__) }
    code, out, = cli("load", "--json", "http://127.0.0.1:1/", env: env)
    assert_equal 0, code
    assert_equal 400, JSON.parse(out)["requests"]
    code, out, = cli("load", "http://127.0.0.1:1/", env: env)
    assert_equal 0, code
    assert_match(/Requests:\s+400/, out)
  end
end
