# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# Parts that register themselves (Registry): the servers, the proxies and
# the services, and `rackbench services`, which lists the last two from
# their registries.
describe Rackbench::Registry do
  let(:dir) { Dir.mktmpdir("rackbench-registry") }
  after { FileUtils.rm_rf(dir) }

  it "loads an entry's own file when it is first asked for, and names the known ones for an unknown one" do
    File.write(File.join(dir, "alpha.rb"), "REGISTRY_TEST_LOADS << :alpha\n$registry_test.register('alpha', 1)\n")
    File.write(File.join(dir, "beta.rb"), "REGISTRY_TEST_LOADS << :beta\n$registry_test.register('beta', 2)\n" \
                                          "$registry_test.register('beta-two', 22, position: 1)\n")
    Object.const_set(:REGISTRY_TEST_LOADS, [])
    $registry_test = Rackbench::Registry.new("widget", dir)
    assert_equal 1, $registry_test.fetch("alpha")
    assert_equal [:alpha], REGISTRY_TEST_LOADS, "only alpha.rb"
    assert_equal 22, $registry_test.fetch("beta-two"), "a name of no file of its own loads every file"
    assert_equal %w[beta-two alpha beta], $registry_test.names, "a position first, then by name"
    error = assert_raises(Rackbench::ConfigError) { $registry_test.fetch("gamma") }
    assert_equal 'unknown widget "gamma" (known: beta-two, alpha, beta)', error.message
    assert_nil $registry_test["gamma"]
  ensure
    Object.send(:remove_const, :REGISTRY_TEST_LOADS) if Object.const_defined?(:REGISTRY_TEST_LOADS)
    $registry_test = nil
  end

  it "gives the proxies and the services from the files that register them, in their documented order" do
    assert_equal %w[none nginx nginx-cache varnish], Rackbench::Proxy.names
    assert_equal %w[postgresql redis memcached], Rackbench::Services.names
    refute_same Rackbench::Services.fetch("redis"), Rackbench::Services.fetch("redis"), "a fresh kind per fetch"
    assert_raises(Rackbench::ConfigError) { Rackbench::Services.fetch("mysql") }
  end

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
end
