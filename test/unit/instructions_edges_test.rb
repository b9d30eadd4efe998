# frozen_string_literal: true

require "test_helper"
require "json"

# The window's edges of an instructions trial, against a directory of the
# test's own: the agents' GC files waited for (the Ruby processes only,
# those with an identity report), a process that never writes failing
# with its pid after the deadline, a watcher's FIFO opened once per edge,
# the GC cycles read from both edges; the engine's gate report checked
# before the counts are trusted (Window); and the start edge's order:
# GC, the gate's pids, then the instrumentation.
describe "instructions: the window's edges" do
  let(:dir) { Dir.mktmpdir("rackbench-edges") }
  let(:window_dir) { File.join(dir, "inside").tap { |d| FileUtils.mkdir_p(d) } }
  let(:identity_dir) { File.join(dir, "identity").tap { |d| FileUtils.mkdir_p(d) } }
  after { FileUtils.rm_rf(dir) }

  def gc_file(pid, edge, minor:, major: 0, major_by: nil)
    doc = { "pid" => pid, "edge" => edge, "role" => "single",
            "gc" => { "minor_gc_count" => minor, "major_gc_count" => major, "compact_count" => 0,
                      "total_allocated_objects" => minor * 1000 }, "latest" => { "major_by" => major_by } }
    File.write(File.join(window_dir, "#{pid}.gc_#{edge}.json"), JSON.generate(doc))
  end

  # A GcEdges whose clock moves one second per sleep; +on_sleep+ runs at each.
  def gc_edges(on_sleep: nil, timeout_s: 5)
    now = 0.0
    Rackbench::Instructions::GcEdges.new(window_dir: window_dir, identity_dir: identity_dir, timeout_s: timeout_s,
                                         clock: -> { now },
                                         sleeper: lambda { |_|
                                           now += 1
                                           on_sleep&.call
                                         })
  end

  describe Rackbench::Instructions::GcEdges do
    it "waits for the Ruby processes' GC at the start and their counts at the end, and reads the window's cycles" do
      File.write(File.join(identity_dir, "#{Process.pid}.json"), "{}")
      edges = gc_edges(on_sleep: -> { gc_file(Process.pid, "start", minor: 20, major: 5) })
      edges.started!([Process.pid, 999_999]) # 999999: a program that is no ruby (no identity report)
      assert_equal [Process.pid], edges.started
      gc_file(Process.pid, "end", minor: 27, major: 6, major_by: "oldmalloc")
      edges.ended!
      assert_equal [{ "pid" => Process.pid, "role" => "single", "minor" => 7, "major" => 1, "compactions" => 0,
                      "allocated_objects" => 7000, "major_by" => "oldmalloc" }], edges.readings
    end

    it "fails naming the process that ran no GC in time, and a server without any Ruby process" do
      File.write(File.join(identity_dir, "#{Process.pid}.json"), "{}")
      error = assert_raises(Rackbench::Instructions::Error) { gc_edges(timeout_s: 3).started!([Process.pid]) }
      assert_match(/process #{Process.pid} did not run its GC at the window's start within 3 s/, error.message)
      error = assert_raises(Rackbench::Instructions::Error) { gc_edges.started!([999_999]) }
      assert_match(/no process of the server loaded rackbench's agent/, error.message)
    end

    it "opens a watcher's FIFO once per edge, when its reader is there" do
      File.write(File.join(identity_dir, "#{Process.pid}.json"), "{}")
      fifo = File.join(window_dir, "#{Process.pid}.window.fifo")
      File.mkfifo(fifo)
      opened = 0
      reader = Thread.new do
        File.open(fifo, "r", &:read)
        opened += 1
        gc_file(Process.pid, "start", minor: 1)
      end
      edges = gc_edges(timeout_s: 60, on_sleep: -> { sleep 0.01 })
      edges.started!([Process.pid])
      reader.join
      assert_equal 1, opened
    end
  end

  describe Rackbench::Instructions::Window do
    let(:valgrind) { Rackbench::Instructions::Valgrind.new(program: "/usr/bin/valgrind", vgdb: "/usr/bin/vgdb") }
    let(:window) do
      Rackbench::Instructions::Window.new(dir: dir, window_dir: window_dir, identity_dir: identity_dir, valgrind: valgrind)
    end
    let(:edges) { Struct.new(:gc, :started_pids).new(nil, []) }

    it "refuses counts whose requests the engine's gate did not hold" do
      { nil => /did not gate/, { "error" => "cannot read --quiet-pids x: No such file" } => /cannot read --quiet-pids/,
        { "pids" => 0, "error" => nil } => /no server process to watch/ }.each do |quiet, message|
        error = assert_raises(Rackbench::Instructions::Error) do
          window.document(edges: edges, result: { "requests" => 10, "quiet" => quiet })
        end
        assert_match message, error.message
      end
    end

    it "gives a calibration's server, which has no window, edges without the GC and the gate" do
      server = Struct.new(:pid, :pgid).new(1, 1)
      assert_nil window.edges(server, window: false).gc
      assert_kind_of Rackbench::Instructions::GcEdges, window.edges(server).gc
    end

    it "names the gate's pids file in the trial's instructions directory" do
      assert_equal File.join(dir, "quiet.pids"), Rackbench::Instructions::Window.quiet_pids_file(dir)
    end
  end

  describe Rackbench::Instructions::Edges do
    it "runs the agents' GC, writes the gate's pids, then switches the instrumentation on, in that order" do
      # A /proc of two processes of the server's group running under callgrind.
      proc_dir = File.join(dir, "proc")
      tool = File.join(dir, "callgrind-amd64-linux").tap { |path| File.write(path, "") }
      [11, 12].each do |pid|
        FileUtils.mkdir_p(File.join(proc_dir, pid.to_s))
        File.write(File.join(proc_dir, pid.to_s, "stat"), "#{pid} (memcheck) S 1 11 11 0 -1 0 0 0 0 0 1 1 0 0 20 0 3 0 100 0 10\n")
        File.symlink(tool, File.join(proc_dir, pid.to_s, "exe"))
      end
      order = []
      quiet = File.join(dir, "quiet.pids")
      gc = Object.new.tap { |g| g.define_singleton_method(:started!) { |pids| order << [:gc, pids] } }
      control = Object.new.tap { |c| c.define_singleton_method(:on) { |pids| order << [:on, pids, File.read(quiet)] } }
      edges = Rackbench::Instructions::Edges.new(server: Struct.new(:pid, :pgid).new(11, 11), control: control, gc: gc,
                                                 quiet_pids_file: quiet, proc_dir: proc_dir)
      edges.started
      assert_nil edges.failure
      assert_equal [[:gc, [11, 12]], [:on, [11, 12], "11\n12\n"]], order
    end
  end
end
