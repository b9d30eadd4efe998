# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# The counting agent (agent/inside.rb): its pure functions here, and the
# whole listener in a process of its own that does known work between its
# own window marks (test/fixtures/agent/inside_probe.rb).
describe "the counting agent" do
  AGENT_DIR = File.expand_path("../../lib/rackbench/agent", __dir__)
  # Outside a trial (no RACKBENCH_TRIAL_DIR) the window starts no watcher
  # and hooks no fork: loading both files here only defines the modules.
  load File.join(AGENT_DIR, "window.rb") unless defined?(RackbenchWindow)
  load File.join(AGENT_DIR, "inside.rb") unless defined?(RackbenchInside)

  def snapshot(at_s:, allocated:, count:, major:, time_ns:, vm:, rss:, pss:, live: 100)
    { at_s: at_s, allocated: allocated, gc_time_ns: time_ns, vm: vm,
      gc: { count: count, minor_gc_count: count - major, major_gc_count: major, heap_live_slots: live,
            heap_allocated_pages: 7, compact_count: 0 },
      memory: { "rss_bytes" => rss, "pss_bytes" => pss } }
  end

  it "gives each counter's change between the two snapshots, the heap at the end, memory at both" do
    start = snapshot(at_s: 10.0, allocated: 1_000, count: 5, major: 1, time_ns: 2_000_000,
                     vm: { class_serial: 10, global_constant_state: 3 }, rss: 1024, pss: 512)
    finish = snapshot(at_s: 12.5, allocated: 51_000, count: 9, major: 2, time_ns: 5_500_000,
                      vm: { class_serial: 12, global_constant_state: 3, constant_cache_invalidations: 4 },
                      rss: 4096, pss: 2048, live: 300).merge(yjit: nil)
    counts = RackbenchInside.counts(pid: 7, ppid: 1, role: "worker", start: start, finish: finish)
    assert_equal [7, 1, "worker", 10.0, 12.5, 2.5], counts.values_at("pid", "ppid", "role", "started_at_s",
                                                                     "ended_at_s", "duration_s")
    assert_equal({ "count" => 4, "minor" => 3, "major" => 1, "time_ms" => 3.5, "heap_live_slots" => 300,
                   "heap_allocated_pages" => 7, "compact_count" => 0 }, counts["gc"])
    assert_equal 50_000, counts["allocated_objects"]
    assert_equal({ "class_serial" => 2, "global_constant_state" => 0, "constant_cache_invalidations" => 4 }, counts["vm"])
    assert_equal({ "warmup_end" => { "rss_bytes" => 1024, "pss_bytes" => 512 },
                   "window_end" => { "rss_bytes" => 4096, "pss_bytes" => 2048 } }, counts["memory"])
    assert_nil counts["yjit"]
  end

  it "leaves GC time null where the ruby does not measure it, and the counters it lacks" do
    start = snapshot(at_s: 1.0, allocated: nil, count: 1, major: 0, time_ns: nil, vm: {}, rss: nil, pss: nil)
    finish = snapshot(at_s: 2.0, allocated: nil, count: 1, major: 0, time_ns: nil, vm: {}, rss: nil, pss: nil)
    counts = RackbenchInside.counts(pid: 1, ppid: 0, role: "single", start: start, finish: finish)
    assert_nil counts["gc"]["time_ms"]
    assert_nil counts["allocated_objects"]
    assert_equal({}, counts["vm"])
  end

  it "reads RSS and PSS from smaps_rollup in bytes, and nil where it cannot" do
    text = "55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:               20480 kB\nPss:               12288 kB\n" \
           "Pss_Anon:           8000 kB\n"
    assert_equal({ "rss_bytes" => 20_971_520, "pss_bytes" => 12_582_912 }, RackbenchInside.parse_rollup(text))
    assert_equal({ "rss_bytes" => nil, "pss_bytes" => nil }, RackbenchInside.memory("/nonexistent/smaps_rollup"))
    live = RackbenchInside.memory
    assert_operator live["pss_bytes"], :>, 0, "this process's own PSS"
  end

  it "takes this ruby's GC time only where it is measured, never turning the measurement on" do
    if GC.respond_to?(:total_time)
      GC.measure_total_time = false
      begin
        assert_nil RackbenchInside.gc_time_ns
        refute GC.measure_total_time
      ensure
        GC.measure_total_time = true
      end
      assert_kind_of Integer, RackbenchInside.gc_time_ns
    else
      assert_nil RackbenchInside.gc_time_ns
    end
  end

  it "writes JSON that a parser reads back the same, non-finite floats as null" do
    data = { "a" => [1, 2.5, nil, true], "s" => "q\"\\\n", "f" => Float::NAN, "e" => 1.0e-9 }
    assert_equal({ "a" => [1, 2.5, nil, true], "s" => "q\"\\\n", "f" => nil, "e" => 1.0e-9 },
                 JSON.parse(RackbenchPlainJson.generate(data)))
  end

  it "tells a single process from a master and a worker" do
    assert_equal "single", RackbenchWindow.role unless RackbenchWindow.forked_child?
    reader, writer = IO.pipe
    RackbenchWindow.parent_forked
    pid = fork do
      RackbenchWindow.instance_variable_set(:@forked_child, true) # what the fork hook does in a trial
      writer.write(RackbenchWindow.role)
      exit!(0)
    end
    writer.close
    Process.wait(pid)
    assert_equal "worker", reader.read
    assert_equal "master", RackbenchWindow.role
  ensure
    RackbenchWindow.instance_variable_set(:@children_forked, 0)
  end

  describe "in a process of its own" do
    let(:trial_dir) { Dir.mktmpdir("rackbench-inside") }
    after { FileUtils.rm_rf(trial_dir) }

    it "counts the objects allocated and the GCs run between the window's edges, and nothing of its own" do
      FileUtils.mkdir_p(File.join(trial_dir, "inside"))
      env = { "RACKBENCH_TRIAL_DIR" => trial_dir, "ALLOCATE" => "200000", "GC_STARTS" => "3" }
      out, status = Open3.capture2e(env, RbConfig.ruby, File.expand_path("../fixtures/agent/inside_probe.rb", __dir__))
      assert status.success?, out
      files = Dir.glob(File.join(trial_dir, "inside", "*.counts.json"))
      assert_equal 1, files.size
      counts = JSON.parse(File.read(files.first))
      assert_equal [status.pid, "single"], counts.values_at("pid", "role")
      # 200,000 Object.new, plus the few the probe's own lines allocate
      # (its marks, the wait's lambda): the agent adds nothing.
      assert_operator counts["allocated_objects"], :>=, 200_000
      assert_operator counts["allocated_objects"], :<, 200_050, "the watcher polled 50 times, allocating nothing"
      assert_operator counts["gc"]["major"], :>=, 3, "GC.start runs a major GC"
      assert_operator counts["gc"]["count"], :>=, counts["gc"]["major"]
      assert_operator counts["duration_s"], :>, 0
      assert_kind_of Hash, counts["vm"]
      %w[warmup_end window_end].each { |edge| assert_operator counts.dig("memory", edge, "pss_bytes"), :>, 0 }
      assert_kind_of Float, counts["gc"]["time_ms"] if GC.respond_to?(:total_time)
    end
  end
end
