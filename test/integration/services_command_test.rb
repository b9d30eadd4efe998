# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# `rackbench services`: the services and the proxies from their registries
# (Registry), each installed program asked its version (a process each).
describe "rackbench services" do
  let(:out) { StringIO.new }

  # A kind of service of the test's own: found by the command because
  # it registered itself, installed or not.
  class RegistryTestService < Rackbench::Services::Kind
    def name = "registry-test"
    def title = "Registry Test"
    def package = "registry-test-server"
    def default_env = "REGISTRY_TEST_URL"
    def programs = { server: "rackbench-registry-test-missing-program" }
  end

  it "lists every registered service and proxy, and says which are not installed here" do
    Rackbench::Services.register("registry-test") { RegistryTestService.new }
    assert_equal Rackbench::CLI::EXIT_OK, Rackbench::CLI.run(%w[services --json], out: out, err: StringIO.new)
    listed = JSON.parse(out.string)
    assert_equal %w[postgresql redis memcached registry-test], listed["services"].map { |s| s["name"] }
    assert_equal %w[nginx nginx-cache varnish], listed["proxies"].map { |p| p["name"] }
    mine = listed["services"].last
    assert_nil mine["version"]
    assert_match(/needs rackbench-registry-test-missing-program .*apt-get install registry-test-server/, mine["missing"])
  ensure
    Rackbench::Services::REGISTRY.unregister("registry-test")
  end
end
