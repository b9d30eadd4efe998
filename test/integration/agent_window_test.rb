# frozen_string_literal: true

require "test_helper"
require "open3"

# The window channel (agent/window.rb) in a process that forks through
# Ruby: the runner's marks (WindowMarks) reach the listener of every
# process once per edge, in order, with the process's role; a process
# forked after the window calls nothing.
describe "the window channel" do
  PROBE = File.expand_path("../fixtures/agent/window_probe.rb", __dir__)
  let(:trial_dir) { Dir.mktmpdir("rackbench-window") }
  let(:marks) { Rackbench::Trial::Http::WindowMarks.new(trial_dir) }
  after { FileUtils.rm_rf(trial_dir) }

  def file(name)
    File.join(marks.dir, name)
  end

  # The runner hands the edges' pipes to the server (the watcher blocks on
  # them), or, where they did not reach it, the watcher polls the files.
  [true, false].each do |pipes|
  it "calls each process's listeners at the start and the end of the window, once each (#{pipes ? "edges' pipes" : "polling"})" do
    marks.reset!
    env = { "RACKBENCH_TRIAL_DIR" => trial_dir }
    env.merge!(marks.env) if pipes
    stdin, out, waiter = Open3.popen2e(env, RbConfig.ruby, PROBE, **(pipes ? marks.spawn_fds : {}))
    marks.spawned!
    stdin.close
    begin
      pids = wait_until(timeout_s: 30, message: "the probe's pids") { File.exist?(file("pids")) && File.read(file("pids")) }
      parent, child = pids.split.map(&:to_i)
      refute File.exist?(file("#{parent}.started")), "nothing before the mark"
      if pipes && RbConfig::CONFIG["host_cpu"] == "x86_64"
        # Each process's watcher thread waits for the pipe with no timeout:
        # poll(2) of one descriptor, timeout -1 (syscall 7 on x86_64), or
        # read(2) of descriptor 7 (syscall 0); a polling watcher would be
        # in a timed futex wait instead.
        [parent, child].each do |pid|
          wait_until(timeout_s: 30, message: "#{pid}'s watcher blocked on the pipe") do
            Dir.glob("/proc/#{pid}/task/*").any? do |task|
              next false unless File.read(File.join(task, "comm")).start_with?("rackbench-wind")

              call = File.read(File.join(task, "syscall")).split
              (call[0] == "7" && call[2] == "0x1" && call[3] == "0xffffffff") || call.first(2) == %w[0 0x7]
            end
          rescue SystemCallError
            false
          end
        end
      end

      marks.mark(:start)
      wait_until(timeout_s: 30, message: "both starts") { [parent, child].all? { |pid| File.exist?(file("#{pid}.started")) } }
      refute File.exist?(file("#{parent}.ended")), "the end waits for its mark"
      marks.mark(:end)
      assert waiter.value.success?, out.read
      assert_equal %w[master worker], [parent, child].map { |pid| File.read(file("#{pid}.started")) }
      assert_equal %w[master worker], [parent, child].map { |pid| File.read(file("#{pid}.ended")) }
      late = File.read(file("late")).to_i
      refute File.exist?(file("#{late}.started")), "a process forked after the window counts nothing"
      assert_match(/\A\d+\.\d{6}\n\z/, File.read(file("window.end")))
    ensure
      Process.kill(:KILL, waiter.pid) if waiter.alive?
      out.close
      marks.close
    end
  end
  end

  it "empties the channel of an earlier attempt's marks and files" do
    marks.reset!
    marks.mark(:start)
    File.write(file("1.counts.json"), "{}")
    marks.reset!
    assert_empty Dir.children(marks.dir)
    refute marks.marked?(:start)
  end
end
