# frozen_string_literal: true

require "test_helper"
require "open3"

# rackbench-guard: a server started through it dies with its parent, and
# is not started at all if the parent is already gone.
describe "rackbench-guard" do
  let(:guard) { Rackbench::Trial::Kind::GUARD }

  before { flunk "rackbench-guard not built at #{guard}: run bin/setup" unless File.executable?(guard) }

  it "runs the command when its parent is the one named" do
    out, status = Open3.capture2(guard, Process.pid.to_s, "echo", "started")
    assert status.success?
    assert_equal "started\n", out
  end

  it "refuses to start the command when the named parent is not its parent" do
    out, status = Open3.capture2(guard, "1", "echo", "started")
    assert_equal 1, status.exitstatus
    assert_equal "", out
  end

  it "TERMs the command when the parent dies" do
    Dir.mktmpdir do |dir|
      pid_file = File.join(dir, "child.pid")
      # An intermediate parent starts `sleep` through the guard, writes its
      # PID, then dies without cleaning up, as a runner killed with -9 would.
      parent = Process.spawn(RbConfig.ruby, "-e", <<~RUBY)
        child = Process.spawn(#{guard.inspect}, Process.pid.to_s, "sleep", "60")
        File.write(#{pid_file.inspect}, child.to_s)
        sleep 0.2
        Process.kill(:KILL, Process.pid)
      RUBY
      Process.wait(parent)
      child = Integer(File.read(pid_file))
      gone = wait_until(timeout_s: 5, message: "the orphan to die") do
        state = File.read("/proc/#{child}/stat")[/\) (\S)/, 1]
        state == "Z" # dead, waiting for a reaper that PID 1 may never be
      rescue Errno::ENOENT
        true
      end
      assert gone
    end
  end
end
