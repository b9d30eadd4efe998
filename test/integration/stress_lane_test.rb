# frozen_string_literal: true

require "test_helper"
require "open3"
require "support/stress_lane"

# RACKBENCH_TEST_STRESS's busy loops: started, stopped, and never left
# behind, even by a suite killed with SIGKILL.
describe Rackbench::Test::StressLane do
  lane_class = Rackbench::Test::StressLane

  it "reads how many loops from RACKBENCH_TEST_STRESS, refusing anything but 0 to 64" do
    assert_equal 0, lane_class.count({})
    assert_equal 0, lane_class.count("RACKBENCH_TEST_STRESS" => "")
    assert_equal 4, lane_class.count("RACKBENCH_TEST_STRESS" => "4")
    %w[-1 65 two 2.5].each do |text|
      error = assert_raises(ArgumentError) { lane_class.count("RACKBENCH_TEST_STRESS" => text) }
      assert_equal "RACKBENCH_TEST_STRESS must be a number of busy loops from 0 to 64, got #{text.inspect}", error.message
    end
  end

  it "runs N spinning rubies until stopped, and stops them all" do
    lane = lane_class.new(2).start
    pids = lane.pids
    assert_equal 2, pids.size
    assert(pids.all? { |pid| alive?(pid) })
    # The guard execs the loop's ruby after Process.spawn returned: wait for it.
    wait_until(timeout_s: 30 * busy_factor, message: "the loops' rubies") do
      pids.all? { |pid| File.binread("/proc/#{pid}/cmdline").split("\0") == [RbConfig.ruby, "-e", lane_class::SPIN] }
    end
    lane.stop
    assert(pids.none? { |pid| alive?(pid) }, "every loop is gone and reaped")
    lane.stop # twice is harmless
    assert_empty lane_class.new(0).start.pids
  end

  it "leaves no loop behind when the process that started it is killed with SIGKILL" do
    script = "require 'support/stress_lane'; lane = Rackbench::Test::StressLane.new(1).start; " \
             "puts lane.pids.first; $stdout.flush; sleep"
    Open3.popen2(RbConfig.ruby, "-I", File.expand_path("..", __dir__), "-I", File.expand_path("../../lib", __dir__),
                 "-e", script) do |_stdin, stdout, waiter|
      loop_pid = Integer(stdout.gets)
      assert alive?(loop_pid)
      Process.kill(:KILL, waiter.pid)
      waiter.value
      # The guard's parent-death signal ends the loop once its parent is
      # gone: a condition, waited for with a generous deadline.
      wait_until(timeout_s: 60, message: "the orphaned loop #{loop_pid} to end") { !alive?(loop_pid) }
    end
  end
end
