# frozen_string_literal: true

require "test_helper"
require "open3"
require "rackbench/servers"
require "rackbench/servers/passenger"

# Passenger's app process script in a ruby of its own that forks; the
# adapter's commands and settings are unit tests
# (test/unit/passenger_adapter_test.rb).
describe "Passenger's app process" do
  let(:adapter) { Rackbench::Servers.fetch("passenger") }

  it "prints the ready line in a child forked through Ruby, not in the parent" do
    script = "require #{File.expand_path("../../lib/rackbench/servers/passenger/app_process.rb", __dir__).inspect}; " \
             "$stdout.sync = true; puts Process.pid; pid = fork; if pid.nil? then exit!(0) else Process.wait(pid) end"
    out, status = Open3.capture2(RbConfig.ruby, "-e", script)
    assert status.success?
    parent, *rest = out.lines.map(&:chomp)
    assert_equal 1, rest.size, out
    child = rest.first[/process (\d+) forked/, 1]
    assert_match adapter.ready_log(1).first, rest.first
    refute_equal parent, child
  end
end
