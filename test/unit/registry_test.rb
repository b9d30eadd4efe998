# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# Parts that register themselves (Registry): the servers, the proxies and
# the services (`rackbench services`, which asks each installed program its
# version, is test/integration/services_command_test.rb).
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
end
