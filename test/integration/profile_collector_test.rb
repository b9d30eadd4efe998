# frozen_string_literal: true

require "test_helper"
require_relative "../support/real_profiles"

# The runner's wait for the server processes' dumps (Profile::Collector):
# a live process that reported its identity owes one, a dead one does not,
# and one that gives none by the deadline is named as missing.
describe Rackbench::Profile::Collector do
  let(:trial_dir) { Dir.mktmpdir("rackbench-collector") }
  after { FileUtils.rm_rf(trial_dir) }

  def report_identity(pid)
    FileUtils.mkdir_p(File.join(trial_dir, "identity"))
    File.write(File.join(trial_dir, "identity", "#{pid}.json"), "{}")
  end

  def dump(pid)
    FileUtils.mkdir_p(File.join(trial_dir, "inside"))
    RealProfiles.dump(File.join(trial_dir, "inside"), pid, RealProfiles.work(outer: 5, inner: 5))
  end

  it "merges the dumps of the live processes and owes nothing for a dead one" do
    dead = Process.spawn(RbConfig.ruby, "-e", "exit")
    Process.wait(dead)
    [Process.pid, dead].each { |pid| report_identity(pid) }
    dump(Process.pid)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    outcome = Rackbench::Profile::Collector.new(trial_dir, deadline_s: 600).collect
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 600, "no wait for the dead"
    assert_empty outcome.missing
    assert_equal [Process.pid], outcome.profile.processes.map { |p| p["pid"] }
  end

  it "waits for a dump that comes late, and names a process that never gives one" do
    report_identity(Process.pid)
    report_identity(Process.ppid)
    # The dump arrives once the collection has started: when it first asks
    # whether the process still runs.
    alive = lambda do |pid|
      dump(pid) if pid == Process.pid && !File.exist?(File.join(trial_dir, "inside", "#{pid}.stackprof.dump"))
      true
    end
    outcome = Rackbench::Profile::Collector.new(trial_dir, deadline_s: 2, alive: alive).collect
    assert_equal [Process.pid], outcome.profile.processes.map { |p| p["pid"] }
    assert_equal [{ "pid" => Process.ppid, "reason" => "no profile by 2 s after the window" }], outcome.missing
  end

  it "has no profile when no process gave a dump" do
    outcome = Rackbench::Profile::Collector.new(trial_dir, deadline_s: 0.1).collect
    assert_nil outcome.profile
    assert_empty outcome.missing
  end
end
