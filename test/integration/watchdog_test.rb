# frozen_string_literal: true

require "test_helper"
require "open3"

# The watchdog with the real rackbench-guard and real processes: after a
# kill -9 of the process that started it, every process marked for its
# results directory is gone (also those that ignore TERM, left the process
# group or started a session of their own), and nothing else is touched.
# Deadlines are generous: the machine is shared, nothing here is timed.
describe "Rackbench::Watchdog (integration)" do
  let(:guard) { Rackbench::Watchdog::BINARY }
  let(:fixtures) { File.expand_path("../fixtures/watchdog", __dir__) }
  let(:lib) { File.expand_path("../../lib", __dir__) }
  let(:dir) { Dir.mktmpdir("rackbench-watchdog") }
  let(:results) { File.join(dir, "results") }
  let(:pids_dir) { File.join(dir, "pids").tap { |path| FileUtils.mkdir_p(path) } }
  # Past grace, the guard's KILL wait and a wide margin for a loaded machine.
  let(:sweep_deadline_s) { 1 + Rackbench::Watchdog::KILL_WAIT_S + 30 }

  before do
    flunk "rackbench-guard not built at #{guard}: run bin/setup" unless File.executable?(guard)
    @bystanders = []
    @parents = []
  end

  after do
    # Whatever a failed test left. The parents first, so that they start
    # nothing after the sweep.
    @parents.each { |pid| kill_child(pid) }
    Rackbench::Watchdog.sweep(results_dir: results, grace_s: 0)
    @bystanders.each { |pid| kill_child(pid) }
    FileUtils.rm_rf(dir)
  end

  # KILLs and reaps a child of this process unless it was reaped already
  # (its PID may belong to someone else by now).
  def kill_child(pid)
    return if Process.wait(pid, Process::WNOHANG)

    Process.kill(:KILL, pid)
    Process.wait(pid)
  rescue Errno::ECHILD, Errno::ESRCH
    nil
  end

  # A process by identity: [pid, start_ticks].
  def identify(pid)
    entry = Rackbench::ProcessTree.read(pid)
    flunk "process #{pid} is gone already" unless entry
    [pid, entry.start_ticks]
  end

  # True while that very process runs (a zombie has exited).
  def running?(key)
    entry = Rackbench::ProcessTree.read(key[0])
    !entry.nil? && entry.start_ticks == key[1] && !entry.zombie?
  end

  # The PID a fixture wrote into pids_dir/name, once it has been written
  # whole and the process has exec'd what it runs for good (cmdline starts
  # with command), so no transient process is left in its place.
  def fixture_process(name, command, timeout_s: 30)
    path = File.join(pids_dir, name)
    wait_until(timeout_s: timeout_s, interval_s: 0.02, message: "#{name} to start") do
      pid = File.exist?(path) && File.read(path)[/\A(\d+)\n\z/, 1]
      pid && File.binread("/proc/#{pid}/cmdline").split("\0").first.to_s.end_with?(command)
    rescue Errno::ENOENT, Errno::ESRCH
      false
    end
    identify(Integer(File.read(path)))
  end

  # Two processes the sweep must leave alone, children of the test: one
  # without the marker, one marked for a directory whose path starts with
  # ours.
  def start_bystanders
    unmarked = Process.spawn("sleep", "300", pgroup: true)
    other = Process.spawn(Rackbench::Watchdog.marker_env("#{results}2"), "sleep", "300", pgroup: true)
    nested = Process.spawn(Rackbench::Watchdog.marker_env(File.join(results, "x")), "sleep", "300", pgroup: true)
    @bystanders.concat([unmarked, other, nested])
    [unmarked, other, nested].map { |pid| identify(pid) }
  end

  def experiment_parent(mode)
    pid = Process.spawn(RbConfig.ruby, "-I", lib, File.join(fixtures, "experiment_parent.rb"), mode, results,
                        pids_dir, pgroup: true, in: File::NULL, out: File::NULL, err: File.join(dir, "parent.log"))
    @parents << pid
    pid
  end

  it "stops every marked process after kill -9 of the process that started it, and nothing else" do
    parent = experiment_parent("watch")
    watchdog = identify(Integer(wait_until(timeout_s: 30, message: "the watchdog") do
      File.exist?(File.join(pids_dir, "watchdog")) && File.read(File.join(pids_dir, "watchdog"))
    end))
    marked = [fixture_process("ignore_term", "sleep"), fixture_process("session_child", "sleep"),
              fixture_process("session_starter", "sh")]
    session_child = Rackbench::ProcessTree.read(marked[1][0])
    refute_equal Rackbench::ProcessTree.read(parent).pgrp, session_child.pgrp, "the session child left the group"
    bystanders = start_bystanders
    assert(marked.all? { |key| running?(key) })

    Process.kill(:KILL, parent)
    Process.wait(parent)

    wait_until(timeout_s: sweep_deadline_s, interval_s: 0.05, message: "the marked processes to go") do
      marked.none? { |key| running?(key) }
    end
    wait_until(timeout_s: sweep_deadline_s, interval_s: 0.05, message: "the watchdog to exit") do
      !running?(watchdog)
    end
    assert(bystanders.all? { |key| running?(key) }, "a process without our marker was stopped")
  end

  it "does not die with the signals that end the runner, and sweeps when its pipe closes" do
    watchdog = Rackbench::Watchdog.start(results_dir: results, grace_s: 1)
    begin
      # Spawned is not yet running main(): wait until it has set up.
      wanted = %w[HUP INT TERM].sum { |name| 1 << (Signal.list.fetch(name) - 1) }
      wait_until(timeout_s: 30, message: "the watchdog to ignore HUP, INT and TERM") do
        File.read("/proc/#{watchdog.pid}/status")[/^SigIgn:\s*(\h+)/, 1].to_i(16) & wanted == wanted
      end
      # Its own group: the group signal a terminal or a `kill -- -PGID` of
      # the runner's group sends does not reach it, and if it did, it would
      # be ignored (a dead watchdog would make #stop raise).
      assert_equal watchdog.pid, Rackbench::ProcessTree.read(watchdog.pid).pgrp
      %i[HUP INT TERM].each { |signal| Process.kill(signal, -watchdog.pid) }
      assert watchdog.alive?
      assert_equal({ termed: 0, killed: 0, survivors: 0 }, watchdog.stop)
    ensure
      watchdog.stop
    end
  end

  it "stops with nothing marked: zero counts, the watchdog reaped, a process spawned meanwhile untouched" do
    watchdog = Rackbench::Watchdog.start(results_dir: results, grace_s: 10)
    # Spawned after start: had it inherited the pipe's write end, the
    # watchdog would never see end of file and #stop would time out.
    bystanders = start_bystanders
    assert_equal({ termed: 0, killed: 0, survivors: 0 }, watchdog.stop)
    refute watchdog.alive?
    assert_raises(Errno::ECHILD) { Process.wait(watchdog.pid) }
    assert(bystanders.all? { |key| running?(key) })
    assert_equal({ termed: 0, killed: 0, survivors: 0 }, watchdog.stop)
  end

  it "sweeps what is left at #stop" do
    watchdog = Rackbench::Watchdog.start(results_dir: results, grace_s: 30)
    leftover = Process.spawn(Rackbench::Watchdog.marker_env(results), "sleep", "300", pgroup: true)
    @bystanders << leftover
    assert_equal({ termed: 1, killed: 0, survivors: 0 }, watchdog.stop)
    _, status = Process.wait2(leftover)
    assert_equal Signal.list.fetch("TERM"), status.termsig
  end

  it "sweeps the orphans of a parent that exited: TERM to all, KILL to those that ignore it, exact counts" do
    parent = experiment_parent("orphans")
    marked = [fixture_process("ignore_term", "sleep"), fixture_process("session_child", "sleep"),
              fixture_process("session_starter", "sh"), fixture_process("term_exits", "sleep")]
    Process.wait(parent)
    bystanders = start_bystanders
    assert(marked.all? { |key| running?(key) })

    counts = Rackbench::Watchdog.sweep(results_dir: results, grace_s: 1)
    # All four TERMed; the two that ignore TERM KILLed.
    assert_equal({ termed: 4, killed: 2, survivors: 0 }, counts)
    assert(marked.none? { |key| running?(key) })
    assert(bystanders.all? { |key| running?(key) })
    assert_equal({ termed: 0, killed: 0, survivors: 0 }, Rackbench::Watchdog.sweep(results_dir: results, grace_s: 1))
  end

  it "TERMs the workers a master starts while it is being swept" do
    log = File.join(dir, "master.log")
    master = Process.spawn(Rackbench::Watchdog.marker_env(results), RbConfig.ruby,
                           File.join(fixtures, "respawning_master.rb"), log, "3", pgroup: true)
    @bystanders << master
    wait_until(timeout_s: 30, message: "the first worker") { File.exist?(log) && File.read(log).include?("started") }
    # A grace far longer than the master needs: the sweep ends when the
    # master, out of workers, exits, never by KILL.
    counts = Rackbench::Watchdog.sweep(results_dir: results, grace_s: 120)
    _, status = Process.wait2(master)
    assert status.success?, "the master exited by itself"
    ended = File.read(log).scan(/^ended \d+ (\d+)$/).flatten.map(&:to_i)
    assert_equal [Signal.list.fetch("TERM")] * 3, ended
    assert_equal({ termed: 4, killed: 0, survivors: 0 }, counts)
  end

  describe "rackbench-guard's command line" do
    def guard_run(*args, **options)
      out, err, status = Open3.capture3(guard, *args, **options)
      [out, err, status.exitstatus]
    end

    it "refuses a bad marker or grace with one line and status 2" do
      [["--sweep", "RACKBENCH_RESULTS_DIR=", "10"], ["--sweep", "=/r", "10"], ["--sweep", "NOEQUALS", "10"],
       ["--sweep", "A=/r", "1.5"], ["--sweep", "A=/r", "-1"], ["--watch", "A=/r", ""],
       ["--sweep", "A=/r", "86400001"]].each do |args|
        out, err, code = guard_run(*args, stdin_data: "")
        assert_equal 2, code, args.inspect
        assert_equal "", out
        assert_equal 1, err.lines.size, err
        assert_match(/\Arackbench-guard: --(sweep|watch): /, err)
      end
      _out, err, code = guard_run("--sweep", "A=/r")
      assert_equal 2, code
      assert_match(/\Ausage: /, err)
      _out, err, code = guard_run("--bogus", "x")
      assert_equal 2, code
      assert_match(/\Ausage: /, err)
    end

    it "sweeps at once under --watch when stdin is already at its end, and refuses a closed stdin" do
      out, err, code = guard_run("--watch", "RACKBENCH_RESULTS_DIR=#{results}", "0", stdin_data: "")
      assert_equal [0, ""], [code, err]
      assert_equal %({"termed":0,"killed":0,"survivors":0}\n), out
      err_path = File.join(dir, "err")
      pid = Process.spawn(guard, "--watch", "RACKBENCH_RESULTS_DIR=#{results}", "0", in: :close, out: File::NULL,
                                                                                  err: err_path)
      _, status = Process.wait2(pid)
      assert_equal 2, status.exitstatus
      assert_match(/\Arackbench-guard: --watch: stdin is not open [^\n]*\n\z/, File.read(err_path))
    end
  end
end
