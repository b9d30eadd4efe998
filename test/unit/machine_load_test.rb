# frozen_string_literal: true

require "test_helper"
require "fileutils"

# What else the machine did during a trial's window, from a fake /proc at
# two instants: this run's processes and the kernel's threads never count.
describe Rackbench::MachineLoad do
  RUNNER_PID = 100

  before do
    @proc = Dir.mktmpdir("rackbench-machine-load")
    @clk_tck = Rackbench::MachineEnv::BusyProcesses.default_clk_tck
  end

  after { FileUtils.rm_rf(@proc) }

  # Writes /proc at one instant: uptime_s, and pid => [name, ppid, cpu ticks].
  def instant(uptime_s, processes)
    Dir.children(@proc).grep(/\A\d+\z/).each { |pid| FileUtils.rm_rf(File.join(@proc, pid)) }
    File.write(File.join(@proc, "uptime"), "#{uptime_s} 0.00\n")
    File.write(File.join(@proc, "loadavg"), "1.50 1.20 0.90 2/300 4242\n")
    processes.each do |pid, (name, ppid, ticks)|
      dir = File.join(@proc, pid.to_s)
      FileUtils.mkdir_p(dir)
      File.write(File.join(dir, "stat"),
                 "#{pid} (#{name}) R #{ppid} #{pid} #{pid} 0 -1 0 0 0 0 0 #{ticks} 0 0 0 20 0 1 0 5 0 0\n")
      File.write(File.join(dir, "cmdline"), "#{name}\0--flag\0")
    end
  end

  # ticks of CPU in a window of window_s, as a percentage of one CPU.
  def percent(ticks, window_s) = (ticks.fdiv(@clk_tck) / window_s * 100).round(1)

  def processes(server_ticks:, worker_ticks:, other_ticks:, kernel_ticks:)
    {
      1 => ["init", 0, 0], 2 => ["kthreadd", 0, 0], 9 => ["ksoftirqd/0", 2, kernel_ticks],
      RUNNER_PID => ["ruby", 1, 0], 101 => ["puma", RUNNER_PID, server_ticks], 102 => ["puma", 101, worker_ticks],
      200 => ["gcc", 1, other_ticks], 201 => ["sshd", 1, 1]
    }
  end

  it "sums the CPU of other processes over the window and names the busiest" do
    instant(1000.0, processes(server_ticks: 0, worker_ticks: 0, other_ticks: 0, kernel_ticks: 0))
    load = Rackbench::MachineLoad.new(proc_root: @proc, runner_pid: RUNNER_PID).start
    instant(1002.0, processes(server_ticks: 150, worker_ticks: 150, other_ticks: 80, kernel_ticks: 90))

    result = load.stop

    assert_equal percent(80, 2.0), result["other_cpu_percent"], "only gcc: not the server, not ksoftirqd"
    assert_equal percent(80, 2.0) > 10, result["busy"]
    assert_equal [[200, "gcc"]], result["busiest"].map { |p| [p["pid"], p["name"]] }
    assert_equal "gcc --flag", result["busiest"].first["command"]
    assert_equal [1.5, 1.2, 0.9], result["loadavg_start"]
    assert_equal 2.0, result["window_s"]
  end

  it "is not busy when only this run worked" do
    instant(50.0, processes(server_ticks: 0, worker_ticks: 0, other_ticks: 0, kernel_ticks: 0))
    load = Rackbench::MachineLoad.new(proc_root: @proc, runner_pid: RUNNER_PID).start
    instant(51.0, processes(server_ticks: 90, worker_ticks: 90, other_ticks: 0, kernel_ticks: 50))

    result = load.stop
    assert_equal 0.0, result["other_cpu_percent"]
    refute result["busy"]
    assert_empty result["busiest"]
  end

  it "has nothing to say when it was never started" do
    assert_nil Rackbench::MachineLoad.new(proc_root: @proc).stop
  end
end
