# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# The instructions agent (agent/instructions_gc.rb) in a process that forks
# through Ruby, its window channel on FIFOs (no pipes reach it, as
# Passenger's app processes): each process's watcher sleeps opening its
# own FIFO (no polling: each poll would count in the window), the runner's
# side (Instructions::GcEdges) opens them at each edge, and every process
# runs a full GC at the start and writes its GC counts at both edges.
describe "the instructions agent" do
  INSTRUCTIONS_GC_PROBE = File.expand_path("../fixtures/agent/instructions_gc_probe.rb", __dir__)
  let(:trial_dir) { Dir.mktmpdir("rackbench-instructions-gc") }
  let(:marks) { Rackbench::Trial::Http::WindowMarks.new(trial_dir) }
  after { FileUtils.rm_rf(trial_dir) }

  it "runs a full GC at the window's start in every process and writes its counts at both edges, woken by FIFOs" do
    marks.reset!
    identity = File.join(trial_dir, "identity")
    FileUtils.mkdir_p(identity)
    env = { "RACKBENCH_TRIAL_DIR" => trial_dir }.merge(Rackbench::Instructions::GcEdges::SERVER_ENV)
    stdin, out, waiter = Open3.popen2e(env, RbConfig.ruby, INSTRUCTIONS_GC_PROBE)
    stdin.close
    begin
      pids_file = File.join(marks.dir, "pids")
      pids = wait_until(timeout_s: 30, message: "the probe's pids") { File.exist?(pids_file) && File.read(pids_file) }
      parent, child = pids.split.map(&:to_i)
      [parent, child].each { |pid| File.write(File.join(identity, "#{pid}.json"), "{}") }
      fifos = [parent, child].map { |pid| File.join(marks.dir, "#{pid}.window.fifo") }
      wait_until(timeout_s: 30, message: "both FIFOs") { fifos.all? { |f| File.pipe?(f) } }
      if RbConfig::CONFIG["host_cpu"] == "x86_64"
        # Each watcher sleeps in openat(2) (syscall 257) of its FIFO, not in a timed wait.
        [parent, child].each do |pid|
          wait_until(timeout_s: 30, message: "#{pid}'s watcher blocked opening its FIFO") do
            Dir.glob("/proc/#{pid}/task/*").any? do |task|
              File.read(File.join(task, "comm")).start_with?("rackbench-wind") &&
                File.read(File.join(task, "syscall")).split.first == "257"
            end
          rescue SystemCallError
            false
          end
        end
      end
      edges = Rackbench::Instructions::GcEdges.new(window_dir: marks.dir, identity_dir: identity, timeout_s: 60)
      marks.mark(:start)
      edges.started!([parent, child])
      marks.mark(:end)
      edges.ended!
      assert waiter.value.success?, out.read
      [parent, child].each do |pid|
        start = JSON.parse(File.read(File.join(marks.dir, "#{pid}.gc_start.json")))
        assert_equal [pid, "start"], start.values_at("pid", "edge")
        assert_kind_of Integer, start.dig("gc", "major_gc_count")
        # The last GC before the edge: GC.start's (gc_by "method"), a major
        # one. Its major_by is "force" unless a major was already due
        # (gc.c reports the due reason first: "nofree", "oldgen", ...).
        assert_equal "method", start["latest"]["gc_by"]
        assert_includes %w[force nofree oldgen shady oldmalloc], start["latest"]["major_by"]
        assert_includes %w[master worker], start["role"]
      end
      readings = edges.readings
      assert_equal [parent, child].sort, readings.map { |r| r["pid"] }.sort
      assert(readings.all? { |r| r["minor"].is_a?(Integer) && r["major"].is_a?(Integer) })
    ensure
      Process.kill(:KILL, waiter.pid) if waiter.alive?
      out.close
      marks.close
    end
  end
end
