# frozen_string_literal: true

require "test_helper"

# The profiler in the server (agent/profile.rb) on the window channel: in
# a process that forks through Ruby, each process profiles the window only
# and dumps inside/<pid>.stackprof.dump, which the runner's Collector
# merges; without RACKBENCH_PROFILE, or with a value it cannot use, there
# is no profiler and no dump.
describe "the profiler in the server" do
  PROFILE_PROBE = File.expand_path("../fixtures/agent/profile_probe.rb", __dir__)
  let(:trial_dir) { Dir.mktmpdir("rackbench-agent-profile") }
  let(:marks) { Rackbench::Trial::Http::WindowMarks.new(trial_dir) }
  after { FileUtils.rm_rf(trial_dir) }

  def file(name)
    File.join(marks.dir, name)
  end

  # Runs the probe (with the test's bundle, where stackprof is) through a
  # window, its output into a file (a pipe nobody reads could block it);
  # returns [parent pid, child pid, the probe's output].
  def run_probe(profile_value)
    marks.reset!
    log = File.join(trial_dir, "probe.log")
    env = { "RACKBENCH_TRIAL_DIR" => trial_dir, "RACKBENCH_PROFILE" => profile_value }
    pid = Process.spawn(env, RbConfig.ruby, "-rbundler/setup", PROFILE_PROBE, %i[out err] => log)
    begin
      pids = wait_until(timeout_s: 60, message: "the probe's pids") do
        File.exist?(file("pids")) && File.read(file("pids"))[/\A(\d+) (\d+)\n\z/] && [$1.to_i, $2.to_i]
      end
      parent, child = pids
      marks.mark(:start)
      begin
        wait_until(timeout_s: 60, message: "both profiles started") do
          [parent, child].all? { |p| File.exist?(file("#{p}.started")) }
        end
      rescue Minitest::Assertion => e
        raise Minitest::Assertion, "#{e.message}: #{Dir.children(marks.dir).sort.join(" ")}; probe: #{File.read(log)}"
      end
      yield if block_given? # while the window is open
      marks.mark(:end)
      _, status = Process.wait2(pid)
      pid = nil
      assert status.success?, File.read(log)
      [parent, child, File.read(log)]
    ensure
      if pid
        Process.kill(:KILL, pid)
        Process.wait(pid)
      end
    end
  end

  it "profiles each process over the window and dumps it by pid, for the collector to merge" do
    parent, child, = run_probe("stackprof:cpu:1000") do
      # Enough CPU time in both for samples, however slow the machine.
      start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      wait_until(timeout_s: 60, message: "some CPU time in the probe") do
        Process.clock_gettime(Process::CLOCK_MONOTONIC) - start > 0.3
      end
    end
    assert_equal "RackbenchProfile::Stackprof,Object", File.read(file("listeners"))
    [parent, child].each { |pid| assert File.exist?(file("#{pid}.stackprof.dump")), "the dump of #{pid}" }
    FileUtils.mkdir_p(File.join(trial_dir, "identity"))
    [parent, child].each { |pid| File.write(File.join(trial_dir, "identity", "#{pid}.json"), "{}") }
    outcome = Rackbench::Profile::Collector.new(trial_dir, deadline_s: 5).collect
    assert_empty outcome.missing
    profile = outcome.profile
    assert_equal ["cpu", 1000], [profile.mode, profile.interval]
    assert_equal [child, parent].sort, profile.processes.map { |p| p["pid"] }.sort
    assert(profile.processes.all? { |p| p["samples"].positive? }, profile.processes.inspect)
    # Each process's CPU time over the window, which a cpu sample weighs:
    # never less than the interval asked, since ITIMER_PROF counts CPU time.
    assert(profile.processes.all? { |p| p["cpu_us"].positive? }, profile.processes.inspect)
    assert_operator profile.sample_us, :>=, 1000 * 0.9
    top = Rackbench::Profile::TopFrames.call(profile, by: :total).map(&:name)
    assert_includes top, "ProfileProbe.spin"
  end

  it "takes the mode and interval asked" do
    parent, = run_probe("stackprof:object:7")
    results = File.open(file("#{parent}.stackprof.dump"), "rb") { |f| Marshal.load(f) }
    assert_equal [:object, 7], results.values_at(:mode, :interval)
    assert results[:raw], "raw samples"
  end

  it "has no profiler and leaves no dump for a value it cannot use, saying why" do
    parent, child, output = run_probe("perf:cpu:1000")
    assert_equal "Object", File.read(file("listeners"))
    assert_match(/RACKBENCH_PROFILE="perf:cpu:1000" is not tool:mode:interval/, output)
    [parent, child].each { |pid| refute File.exist?(file("#{pid}.stackprof.dump")) }
  end

  it "is loaded by the launcher only for a profiled trial" do
    launcher = File.read(Rackbench::BundleEnv::LAUNCHER)
    assert_match(%r{load File.expand_path\("../agent/profile.rb", __dir__\) if ENV\["RACKBENCH_PROFILE"\]}, launcher)
  end
end
