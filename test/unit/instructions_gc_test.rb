# frozen_string_literal: true

require "test_helper"
require "stringio"

# Ruby's GC in an instructions window, counted apart: the call graph's
# edges read from callgrind's text (CallgrindFile#calls), the collector's
# cost from the calls into it (GcCost: by name, with GCC's clone suffixes;
# a call from one of its functions to another counted once; by a stripped
# ruby's probe entries), the probe's difference between a run with the GC
# on and one with it off (GcProbe.difference: entries, callbacks the
# collector runs through shared functions left out, exported names left
# out, crumbs left out), and the document's gc section (GcFigure: known,
# unknown when nothing is named and cycles ran, zero when none ran).
describe "instructions: the GC apart" do
  # A callgrind file: +calls+ are [caller, callee, count, inclusive], +own+
  # [function, self cost]; every function in libruby unless "obj:name".
  def callgrind(own:, calls:, pid: 7)
    lines = ["version: 1", "creator: callgrind-3.19.0", "pid: #{pid}", "cmd: ruby", "events: Ir", ""]
    functions = (own.map(&:first) + calls.flat_map { |c| c.first(2) }).uniq
    functions.each do |function|
      object, name = function.include?(":") ? function.split(":", 2) : ["/usr/lib/libruby.so.3.4", function]
      lines << "ob=#{object}" << "fn=#{name}"
      own.select { |f, _| f == function }.each { |_, cost| lines << "0 #{cost}" }
      calls.select { |c| c.first == function }.each do |_, callee, count, inclusive|
        callee_object, callee_name = callee.include?(":") ? callee.split(":", 2) : [nil, callee]
        lines << "cob=#{callee_object}" if callee_object
        lines << "cfn=#{callee_name}" << "calls=#{count} 0" << "0 #{inclusive}"
      end
    end
    Rackbench::Instructions::CallgrindFile.new(StringIO.new(lines.join("\n") + "\n"))
  end

  # A window: the VM allocates (newobj_slowpath starts gc_start, which
  # marks and sweeps), a malloc over its limit collects, and the sweep
  # frees through rb_st_foreach, which the VM also calls.
  let(:window) do
    callgrind(own: [["vm_exec_core", 9000], ["newobj_slowpath", 100], ["gc_start", 300], ["gc_marks_rest", 2000],
                    ["gc_sweep.part.0", 1500], ["rb_st_foreach", 50], ["garbage_collect_with_gvl", 10],
                    ["objspace_xmalloc0", 40], ["mark_i", 20]],
              calls: [["vm_exec_core", "newobj_slowpath", 40, 3900], ["newobj_slowpath", "gc_start", 1, 3800],
                      ["gc_start", "gc_marks_rest", 1, 2000], ["gc_start", "gc_sweep.part.0", 1, 1500],
                      ["vm_exec_core", "objspace_xmalloc0", 4, 1040], ["objspace_xmalloc0", "garbage_collect_with_gvl", 1, 1000],
                      ["garbage_collect_with_gvl", "gc_start", 1, 990], ["vm_exec_core", "rb_st_foreach", 2, 70],
                      ["rb_st_foreach", "mark_i", 2, 20]])
  end

  describe Rackbench::Instructions::CallgrindFile do
    it "keeps each call's count and inclusive cost as an edge, its callee's object where cob= says" do
      file = callgrind(own: [["a", 10]], calls: [["a", "b", 3, 70], ["a", "/lib/libc.so.6:malloc", 2, 20]])
      edges = file.calls.to_h { |(caller, callee), call| [[caller.name, File.basename(callee.object), callee.name], call.to_a] }
      assert_equal({ ["a", "libruby.so.3.4", "b"] => [3, [70]], ["a", "libc.so.6", "malloc"] => [2, [20]] }, edges)
      assert_equal 10, file.functions.values.sum, "a call's cost is not the caller's own"
    end
  end

  describe Rackbench::Instructions::GcCost do
    it "counts every call into the collector from outside it once, by name, clones and recursion included" do
      cost = Rackbench::Instructions::GcCost.new([window])
      assert_equal 3800 + 1000, cost.instructions
      assert cost.named?
      assert_equal "gc_rest", Rackbench::Instructions::GcCost.entry("gc_rest.part.0")
      assert_equal "gc_start", Rackbench::Instructions::GcCost.entry("gc_start.cold'2")
      assert_nil Rackbench::Instructions::GcCost.entry("gc_mark_children")
      assert_nil Rackbench::Instructions::GcCost.entry("rb_gc_writebarrier")
    end

    it "finds nothing in a stripped ruby's window, and a probe's entries by address" do
      stripped = callgrind(own: [["0x00000000000d5560", 300], ["0x00000000000d52a0", 1500]],
                           calls: [["0x0000000000100000", "0x00000000000d5560", 1, 1800],
                                   ["0x00000000000d5560", "0x00000000000d52a0", 1, 1500]])
      refute Rackbench::Instructions::GcCost.new([stripped]).named?
      probed = Rackbench::Instructions::GcCost.new([stripped], entries: [["libruby.so.3.4", "0x00000000000d52a0"]])
      assert probed.named?
      assert_equal 1500, probed.instructions
    end
  end

  describe Rackbench::Instructions::GcProbe do
    it "takes the unnamed functions the GC alone ran, called from a function both runs ran, and nothing else" do
      # 0xb0 (gc_start) runs in both, its own code (inlined marking) only with the GC on; 0xa0 (the
      # allocation's slow path) is as busy in both.
      on = callgrind(own: [["rb_ary_each", 10], ["0xb0", 600], ["0xa0", 50]],
                     calls: [["rb_ary_each", "0xa0", 100, 5000], ["0xa0", "0xb0", 1, 4000], # slowpath -> gc_start
                             ["0xb0", "0xc0", 1, 3000], ["0xb0", "0xd0", 1, 900],          # gc_start -> mark, sweep
                             ["0xc0", "0xe0", 5, 200], ["0xe0", "0xf0", 5, 100],          # mark -> st_foreach -> callback
                             ["rb_ary_each", "0xe0", 1, 10],                              # the mutator's st_foreach
                             ["rb_ary_each", "rb_threadptr_execute_interrupts", 1, 900],  # an interrupt the GC set off
                             ["0xa0", "0x99", 1, 1]])                                     # a crumb
      off = callgrind(own: [["rb_ary_each", 10], ["0xb0", 5], ["0xa0", 45]],
                      calls: [["rb_ary_each", "0xa0", 100, 1000], ["0xa0", "0xb0", 1, 5], ["rb_ary_each", "0xe0", 1, 10]])
      entries = Rackbench::Instructions::GcProbe.difference(on, off, ["libruby.so.3.4"])
      assert_equal [%w[libruby.so.3.4 0xb0], %w[libruby.so.3.4 0xc0], %w[libruby.so.3.4 0xd0]], entries
    end

    it "answers nil without running anything twice for a ruby that names its collector, and keeps the answer" do
      Dir.mktmpdir do |dir|
        calls = []
        named = <<~CG
          version: 1
          pid: 9
          events: Ir
          ob=/lib/libruby.so.3.4
          fn=rb_ary_each
          0 10
          cfn=gc_start
          calls=1 0
          0 500
          fn=gc_start
          0 500
        CG
        runner = lambda do |argv, env:, timeout_s:|
          calls << [argv, env, timeout_s]
          File.write(argv.find { |a| a.start_with?("--callgrind-out-file=") }.split("=", 2).last, named)
          Rackbench::Rubies::Child::Result.new(status: Struct.new(:success?).new(true), timed_out: false, output: "1\n")
        end
        install = Struct.new(:path, :engine).new(RbConfig.ruby, "ruby")
        variant = Struct.new(:name, :install, :command).new("ruby", install, [RbConfig.ruby])
        valgrind = Rackbench::Instructions::Valgrind.new(program: "/usr/bin/valgrind", vgdb: "/usr/bin/vgdb")
        valgrind.define_singleton_method(:version) { "3.19.0" }
        probe = Rackbench::Instructions::GcProbe.new(valgrind: valgrind, cache_dir: dir, runner: runner, dir: dir)
        assert_nil probe.entries(variant, env: {})
        assert_equal 2, calls.size
        assert_includes calls.first.first, "--toggle-collect=rb_ary_each"
        assert_equal %w[on off], calls.map { |c| c[1]["RACKBENCH_GC_PROBE"] }
        again = Rackbench::Instructions::GcProbe.new(valgrind: valgrind, cache_dir: dir, runner: runner, dir: dir)
        assert_nil again.entries(variant, env: {})
        assert_equal 2, calls.size, "the kept answer, no valgrind again"
      end
    end
  end

  describe Rackbench::Instructions::GcFigure do
    def readings(minor:, major: 0, missing: false)
      [missing ? { "pid" => 1, "missing" => true } : { "pid" => 1, "minor" => minor, "major" => major, "compactions" => 0,
                                                        "major_by" => major.positive? ? "oldmalloc" : nil }]
    end

    it "gives the GC's instructions per request, its cycles and what set off its majors" do
      doc = Rackbench::Instructions::GcFigure.new(readings: readings(minor: 7, major: 1), files: [window], requests: 100).to_h
      assert_equal({ "minor" => 7, "major" => 1, "compactions" => 0 }, doc["cycles"])
      assert_equal [4800, 48.0, true, "symbols", ["oldmalloc"]], doc.values_at("instructions", "per_request", "named", "source", "major_by")
    end

    it "has no GC instructions when cycles ran and nothing names the collector, and 0 when none ran" do
      stripped = callgrind(own: [["0x10", 500]], calls: [])
      unknown = Rackbench::Instructions::GcFigure.new(readings: readings(minor: 2), files: [stripped], requests: 10).to_h
      assert_equal [nil, nil, false, nil], unknown.values_at("instructions", "per_request", "named", "source")
      none = Rackbench::Instructions::GcFigure.new(readings: readings(minor: 0), files: [stripped], requests: 10).to_h
      assert_equal [0, 0.0], none.values_at("instructions", "per_request")
      missing = Rackbench::Instructions::GcFigure.new(readings: readings(minor: 0, missing: true), files: [stripped],
                                                      requests: 10).to_h
      assert_nil missing["cycles"]
      assert_nil missing["instructions"]
    end
  end
end
