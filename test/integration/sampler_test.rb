# frozen_string_literal: true

require "test_helper"
require "etc"
require "rbconfig"
require "rackbench/observe/process_tree"
require "rackbench/observe/sampler"

# Writes a fake /proc tree: stat lines in the kernel's format, smaps_rollup
# files and /proc/uptime, so tree walking and sampling arithmetic can be
# checked exactly.
module FakeProc
  def fake_proc(pid, ppid:, pgrp:, state: "S", utime: 0, stime: 0, cutime: 0, cstime: 0, start: 100, rss_pages: 256,
                comm: "ruby", rss_kib: nil, pss_kib: nil)
    dir = File.join(@proc, pid.to_s)
    FileUtils.mkdir_p(dir)
    fields = [state, ppid, pgrp, pgrp, 0, -1, 4_194_560, 100, 0, 0, 0, utime, stime, cutime, cstime, 20, 0, 1, 0, start,
              100_000_000, rss_pages, 18_446_744_073_709_551_615, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 17, 0]
    write_atomically(File.join(dir, "stat"), "#{pid} (#{comm}) #{fields.join(" ")}\n")
    rollup = File.join(dir, "smaps_rollup")
    if rss_kib
      write_atomically(rollup, "00400000-7ffd0000 ---p 00000000 00:00 0 [rollup]\nRss: #{rss_kib} kB\n" \
                               "Pss: #{pss_kib} kB\nPss_Anon: 1 kB\nShared_Clean: 0 kB\n")
    else
      FileUtils.rm_f(rollup)
    end
  end

  # A sampling thread may read while the test writes: it must see the old
  # file or the new one, as with the real /proc, never half of one.
  def write_atomically(path, text)
    File.write("#{path}.tmp", text)
    File.rename("#{path}.tmp", path)
  end

  def fake_uptime(seconds)
    File.write(File.join(@proc, "uptime"), format("%.2f 1000.00\n", seconds))
  end

  def ticks_per_s
    Etc.sysconf(Etc::SC_CLK_TCK)
  end
end

describe Rackbench::ProcessTree do
  include FakeProc

  before { @proc = Dir.mktmpdir("rackbench-fake-proc") }
  after { FileUtils.remove_entry(@proc) }

  it "parses the kernel's stat line, even with parentheses and spaces in the name" do
    own = Rackbench::ProcessTree.parse_stat(File.read("/proc/self/stat"))
    assert_equal Process.pid, own.pid
    assert_equal Process.ppid, own.ppid
    assert_equal Process.getpgrp, own.pgrp
    assert_operator own.rss_pages, :>, 0

    fake_proc(42, ppid: 7, pgrp: 42, comm: "a) (b c", utime: 11, stime: 22, start: 333, rss_pages: 44, state: "Z")
    entry = Rackbench::ProcessTree.read(42, proc_dir: @proc)
    assert_equal [42, 7, 42, 11, 22, 333, 44], entry.to_h.values_at(:pid, :ppid, :pgrp, :utime_ticks, :stime_ticks,
                                                                     :start_ticks, :rss_pages)
    assert entry.zombie?
    assert_nil Rackbench::ProcessTree.parse_stat("12 (truncated) S 1 2")
    assert_nil Rackbench::ProcessTree.read(99_999, proc_dir: @proc)
  end

  it "finds the root, its descendants in any group, and its group's reparented members" do
    fake_proc(100, ppid: 1, pgrp: 100)            # root, leads group 100
    fake_proc(101, ppid: 100, pgrp: 100)          # worker
    fake_proc(102, ppid: 101, pgrp: 102)          # grandchild in a group of its own
    fake_proc(103, ppid: 1, pgrp: 100)            # group member whose parent died
    fake_proc(104, ppid: 100, pgrp: 100, state: "Z") # exited, not yet reaped
    fake_proc(200, ppid: 1, pgrp: 200)            # unrelated
    fake_proc(201, ppid: 200, pgrp: 200)
    FileUtils.mkdir_p(File.join(@proc, "self")) # not a PID: ignored

    assert_equal [100, 101, 102, 103], Rackbench::ProcessTree.pids(100, proc_dir: @proc)
    assert_equal [100, 101, 102, 103, 104], Rackbench::ProcessTree.pids(100, zombies: true, proc_dir: @proc)
    assert_equal [101, 102], Rackbench::ProcessTree.pids(101, pgid: nil, proc_dir: @proc)

    FileUtils.rm_r(File.join(@proc, "100")) # the root died: its group still counts
    assert_equal [101, 102, 103], Rackbench::ProcessTree.pids(100, proc_dir: @proc)
    assert_empty Rackbench::ProcessTree.pids(300, proc_dir: @proc)
  end

  it "walks a real process tree" do
    script = "2.times { fork { sleep } }; sleep"
    root = Process.spawn(RbConfig.ruby, "--disable-gems", "-e", script, pgroup: true)
    wait_until(message: "three processes") { Rackbench::ProcessTree.pids(root).size == 3 }
    assert_equal root, Rackbench::ProcessTree.pids(root).first
  ensure
    if root
      Process.kill("KILL", -root)
      Process.wait(root)
    end
  end
end

describe Rackbench::Sampler do
  include FakeProc

  before { @proc = Dir.mktmpdir("rackbench-fake-proc") }
  after { FileUtils.remove_entry(@proc) }

  # A sampler that only samples at start and stop, so the test decides
  # what each of the two samples sees.
  def two_sample_sampler(root)
    Rackbench::Sampler.new(root, interval_s: 600, proc_dir: @proc)
  end

  it "sums memory over the tree and counts CPU time inside the window only" do
    t0 = 1000 * ticks_per_s
    fake_uptime(1000)
    fake_proc(100, ppid: 1, pgrp: 100, utime: 500, stime: 100, start: t0 - 50, rss_kib: 10_000, pss_kib: 6_000)
    fake_proc(101, ppid: 100, pgrp: 100, utime: 300, stime: 30, start: t0 - 40, rss_kib: 8_000, pss_kib: 4_000)
    sampler = two_sample_sampler(100).start

    # During the window: the root works, worker 101 works then exits, and a
    # new worker 102 is born.
    fake_proc(100, ppid: 1, pgrp: 100, utime: 550, stime: 110, start: t0 - 50, rss_kib: 12_000, pss_kib: 7_000)
    FileUtils.rm_r(File.join(@proc, "101"))
    fake_proc(102, ppid: 100, pgrp: 100, utime: 30, stime: 3, start: t0 + 10, rss_kib: 9_000, pss_kib: 5_000)
    fake_proc(103, ppid: 1, pgrp: 103, utime: 999, stime: 999, start: t0 + 10, rss_kib: 1, pss_kib: 1) # unrelated
    summary = sampler.stop

    assert_equal 2, summary[:samples]
    assert_equal 21_000 * 1024, summary[:rss_peak_bytes]
    assert_equal 19_500 * 1024, summary[:rss_mean_bytes]
    assert_equal 12_000 * 1024, summary[:pss_peak_bytes]
    assert_equal 11_000 * 1024, summary[:pss_mean_bytes]
    assert_in_delta (50 + 0 + 30).to_f / ticks_per_s, summary[:cpu_user_s], 1e-9
    assert_in_delta (10 + 0 + 3).to_f / ticks_per_s, summary[:cpu_system_s], 1e-9
    assert_equal 2, summary[:processes_peak]
    assert_in_delta 2.0, summary[:processes_mean]
    assert_operator summary[:duration_s], :>=, 0
  end

  it "keeps what it last read from a process that exits" do
    t0 = 1000 * ticks_per_s
    fake_uptime(1000)
    fake_proc(100, ppid: 1, pgrp: 100, utime: 0, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    fake_proc(101, ppid: 100, pgrp: 100, utime: 10, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    sampler = Rackbench::Sampler.new(100, interval_s: 0.01, proc_dir: @proc).start
    fake_proc(101, ppid: 100, pgrp: 100, utime: 70, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    wait_until(message: "a sample of the busy worker") { sampler.sample_count >= 2 }
    FileUtils.rm_r(File.join(@proc, "101"))
    summary = sampler.stop

    assert_in_delta 60.0 / ticks_per_s, summary[:cpu_user_s], 1e-9
    assert_equal 1, summary[:processes_mean].floor
  end

  it "counts a child born in the window whole when its parent waited for it, not what was last read from it" do
    t0 = 1000 * ticks_per_s
    fake_uptime(1000)
    fake_proc(100, ppid: 1, pgrp: 100, utime: 5, cutime: 7, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    sampler = Rackbench::Sampler.new(100, interval_s: 0.01, proc_dir: @proc).start
    fake_proc(101, ppid: 100, pgrp: 100, utime: 20, stime: 2, start: t0 + 10, rss_kib: 100, pss_kib: 100)
    wait_until(message: "a sample of the child") { sampler.sample_count >= 3 }
    # It worked on after its last read (50 and 5 in all), exited, and the
    # root waited for it: the root's cutime and cstime took its whole times.
    FileUtils.rm_r(File.join(@proc, "101"))
    fake_proc(100, ppid: 1, pgrp: 100, utime: 9, cutime: 7 + 50, cstime: 5, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    summary = sampler.stop
    assert_in_delta (4 + 50).to_f / ticks_per_s, summary[:cpu_user_s], 1e-9
    assert_in_delta 5.0 / ticks_per_s, summary[:cpu_system_s], 1e-9
  end

  it "counts children too short-lived to be read from their parent's cutime, and a zombie's final times" do
    t0 = 1000 * ticks_per_s
    fake_uptime(1000)
    fake_proc(100, ppid: 1, pgrp: 100, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    fake_proc(200, ppid: 1, pgrp: 200, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    sampler = two_sample_sampler(100).start
    # Between the two samples: children of the root came and went (30
    # ticks, waited for), and one exited and is not yet waited for.
    fake_proc(100, ppid: 1, pgrp: 100, cutime: 30, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    fake_proc(102, ppid: 100, pgrp: 100, state: "Z", utime: 12, start: t0 + 10)
    summary = sampler.stop
    assert_in_delta 42.0 / ticks_per_s, summary[:cpu_user_s], 1e-9
    assert_equal 1, summary[:processes_peak], "a zombie holds no memory and is no process of the server"
  end

  it "counts a process that joined the tree late only from its first sample" do
    t0 = 1000 * ticks_per_s
    fake_uptime(1000)
    fake_proc(100, ppid: 1, pgrp: 100, start: t0 - 5, rss_kib: 100, pss_kib: 100)
    sampler = two_sample_sampler(100).start
    fake_proc(150, ppid: 1, pgrp: 100, utime: 400, start: t0 - 100, rss_kib: 100, pss_kib: 100) # old, found late
    summary = sampler.stop
    assert_in_delta 0.0, summary[:cpu_user_s]
  end

  it "reports PSS as nil and falls back to stat's RSS where smaps_rollup cannot be read" do
    fake_uptime(1000)
    fake_proc(100, ppid: 1, pgrp: 100, rss_pages: 1000)
    summary = two_sample_sampler(100).start.stop
    assert_nil summary[:pss_peak_bytes]
    assert_nil summary[:pss_mean_bytes]
    assert_equal 1000 * Etc.sysconf(Etc::SC_PAGESIZE), summary[:rss_peak_bytes]
  end

  it "samples nothing for a tree that is gone, without failing" do
    fake_uptime(1000)
    summary = two_sample_sampler(12_345).start.stop
    assert_equal [0, 0, 0, 2], summary.values_at(:rss_peak_bytes, :pss_peak_bytes, :processes_peak, :samples)
  end

  it "is started once and stopped once" do
    fake_uptime(1000)
    assert_raises(ArgumentError) { Rackbench::Sampler.new(1, interval_s: 0) }
    sampler = two_sample_sampler(100)
    assert_raises(Rackbench::Error) { sampler.stop }
    sampler.start
    assert_raises(Rackbench::Error) { sampler.start }
    first = sampler.stop
    assert_same first, sampler.stop
  end

  it "measures a real process tree, including a child that exits" do
    # The root allocates ~30 MB and forks a child that burns 0.25 s of CPU
    # and exits; the root reaps it and reports on stdout.
    script = <<~RUBY
      $stdout.sync = true
      data = "x" * 30_000_000
      gets
      pid = fork do
        cpu = -> { Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) }
        start = cpu.call
        nil while cpu.call - start < 0.25
      end
      Process.wait(pid)
      puts "done \#{data.size}"
      sleep
    RUBY
    reader, writer = IO.pipe
    input_r, input_w = IO.pipe
    root = Process.spawn(RbConfig.ruby, "--disable-gems", "-e", script, in: input_r, out: writer, pgroup: true)
    writer.close
    input_r.close
    wait_until(message: "memory allocated") { (Rackbench::ProcessTree.read(root)&.rss_pages || 0) * 4096 > 30_000_000 }

    sampler = Rackbench::Sampler.new(root, interval_s: 0.02).start
    input_w.puts "go"
    assert_equal "done 30000000", reader.gets&.chomp
    summary = sampler.stop

    assert_operator summary[:samples], :>=, 3
    assert_operator summary[:rss_peak_bytes], :>, 30_000_000
    assert_operator summary[:rss_mean_bytes], :>, 30_000_000
    assert_operator summary[:pss_peak_bytes], :>, 30_000_000 if File.readable?("/proc/#{root}/smaps_rollup")
    assert_equal 2, summary[:processes_peak]
    assert_operator summary[:cpu_user_s] + summary[:cpu_system_s], :>=, 0.18
  ensure
    if root
      Process.kill("KILL", -root)
      Process.wait(root)
    end
    [reader, writer, input_r, input_w].each { |io| io&.close unless io&.closed? }
  end
end
