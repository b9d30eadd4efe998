# frozen_string_literal: true

require "test_helper"

# What an instructions trial stores beside its costliest functions: the
# call graph of the window (Instructions::CallGraph: each function's self
# and inclusive cost and calls, the edges caller to callee, recursion
# levels merged without counting a recursion twice) and, with the cache
# simulation, estimated cycles (Instructions::Cycles, the model CodSpeed
# uses). test/fixtures/callgrind_graph: a process whose VM loop calls a C
# function that yields back into the loop (vm_exec_core'2), with every
# event of --cache-sim=yes, and a second one calling into another object.
describe "instructions: the call graph and estimated cycles" do
  let(:fixtures) { File.expand_path("../fixtures/callgrind_graph", __dir__) }
  let(:files) { Dir.glob(File.join(fixtures, "callgrind.*")).sort.map { |path| Rackbench::Instructions::CallgrindFile.read(path) } }
  let(:first) { files.first }
  let(:graph) { Rackbench::Instructions::CallGraph.new(files).to_h }

  def function(name)
    graph["functions"].find { |f| f["name"] == name }
  end

  it "reads every event, and each call's count and inclusive cost as an edge, the callee's object by cob=" do
    assert_equal %w[Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw], first.events
    assert_equal({ "Ir" => 10_000, "Dr" => 3000, "Dw" => 1000, "I1mr" => 100, "D1mr" => 200, "D1mw" => 50,
                   "ILmr" => 10, "DLmr" => 20, "DLmw" => 5 }, first.event_totals)
    assert_equal first.total, first.functions.values.sum, "a call's cost stays out of the caller's own"
    calls = first.calls.to_h { |(from, to), call| [[from.name, to.name], [call.count, call.inclusive.first]] }
    assert_equal [40, 6000], calls[%w[vm_exec_core vm_call_cfunc]]
    assert_equal [20, 4500], calls[%w[rb_yield vm_exec_core'2]]
    assert_equal [30, 3000], calls[%w[vm_exec_core'2 rb_hash_aset]]
    second = files.last
    call = second.calls.find { |(_, to), _| to.name == "malloc" }
    assert_equal "/usr/lib/x86_64-linux-gnu/libc.so.6", call.first.last.object
    assert_equal [3, [9, 0, 0, 0, 0, 0, 0, 0, 0]], [call.last.count, call.last.inclusive], "costs left out at the end are 0"
  end

  it "gives each function its self and inclusive cost and calls, a recursion counted once" do
    vm = function("vm_exec_core")
    # Self: both levels (2000 + 1500) and the second process's 990.
    assert_equal 4490, vm["self"]
    # Inclusive: the outermost level's own code and calls (2000 + 6000 +
    # 1000), which hold the nested level's 4500 once, plus the second
    # process's 990 + 9; the levels' sum would count the nested loop twice.
    assert_equal 9999, vm["inclusive"]
    assert_equal [4000, 4000, 40], function("rb_hash_aset").values_at("self", "inclusive", "calls"),
                 "called 10 times from the loop and 30 from its nested level"
    assert_equal [1000, 6000], function("vm_call_cfunc").values_at("self", "inclusive")
    # What callers explain: rb_hash_aset's every call, from the loop and its
    # nested level; nothing of the loop's outermost level, a root.
    assert_equal [4000, 6000, 0], %w[rb_hash_aset vm_call_cfunc vm_exec_core].map { |name| function(name)["called"] }
    assert_equal 11_000, graph["total"]
    assert_operator graph["functions"].map { |f| f["inclusive"] }.max, :<=, graph["total"]
  end

  it "keeps the outermost level's edges, so that a caller's edges add up to no more than its inclusive cost" do
    names = graph["functions"].map { |f| f["name"] }
    edges = graph["edges"].map { |from, to, count, cost| [names[from], names[to], count, cost] }
    assert_includes edges, ["vm_exec_core", "vm_call_cfunc", 40, 6000]
    assert_includes edges, ["rb_yield", "vm_exec_core", 20, 4500]
    assert_includes edges, ["vm_exec_core", "rb_hash_aset", 10, 1000], "the nested level's 30 calls are inside rb_yield's edge"
    graph["functions"].each_with_index do |f, i|
      out = graph["edges"].select { |from, *| from == i }.sum(&:last)
      assert_operator out, :<=, f["inclusive"], f["name"]
    end
  end

  it "lists the functions above a small share and says what the rest cost at most" do
    refute(graph["functions"].any? { |f| f["name"] == Rackbench::Instructions::Collection::JIT_CODE })
    assert_equal 1, graph["unlisted_self_max"], "the JIT's 1 instruction is below 0.01%"
  end

  it "estimates cycles from the cache simulation's events: L1 hits + 5 LL hits + 35 RAM hits" do
    estimate = Rackbench::Instructions::Cycles.estimate(first.event_totals)
    l1_misses = 100 + 200 + 50
    ram = 10 + 20 + 5
    assert_equal({ "l1_hits" => 14_000 - l1_misses, "ll_hits" => l1_misses - ram, "ram_hits" => ram,
                   "cycles" => (14_000 - l1_misses) + (5 * (l1_misses - ram)) + (35 * ram) }, estimate)
    doc = Rackbench::Instructions::Cycles.fields(files, 10)["cache_sim"]
    assert_equal 17_982, doc["cycles"]
    assert_in_delta 1798.2, doc["per_request"], 1e-9
    assert_equal Rackbench::Instructions::Cycles::MODEL, doc["model"]
    # Per function too: rb_hash_aset's own events.
    assert_equal 6412, function("rb_hash_aset")["cycles"]
  end

  it "estimates nothing from a dump without the simulation's events" do
    plain = Rackbench::Instructions::CallgrindFile.read(File.expand_path("../fixtures/callgrind/callgrind.4001.1", __dir__))
    assert_nil Rackbench::Instructions::Cycles.estimate(plain.event_totals)
    assert_equal({}, Rackbench::Instructions::Cycles.fields([plain], 10))
    refute Rackbench::Instructions::CallGraph.new([plain]).to_h["functions"].first.key?("cycles")
  end

  it "puts both fields beside the instructions document's own" do
    doc = Rackbench::Instructions::Collection.new(dir: fixtures).document(requests: 10, main_pid: 5001)
    assert_equal [11_000, 1100.0], doc.values_at("instructions", "per_request")
    assert_equal graph, doc["call_graph"]
    assert_equal 17_982, doc.dig("cache_sim", "cycles")
    plain = Rackbench::Instructions::Collection.new(dir: File.expand_path("../fixtures/callgrind", __dir__))
                                               .document(requests: 10)
    refute plain.key?("cache_sim")
    assert_equal plain["instructions"], plain.dig("call_graph", "total")
  end

  describe "the cache simulation's setting" do
    it "runs callgrind with the cache simulation and caches of a fixed size only when asked" do
      on = Rackbench::Instructions::Valgrind.new(program: "/usr/bin/valgrind", vgdb: "/usr/bin/vgdb", cache_sim: true)
      off = Rackbench::Instructions::Valgrind.new(program: "/usr/bin/valgrind", vgdb: "/usr/bin/vgdb")
      assert_equal ["--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"], on.wrapper("/t").last(4)
      assert_equal off.wrapper("/t"), on.wrapper("/t")[0...-4]
      refute(off.wrapper("/t").any? { |arg| arg.start_with?("--cache-sim", "--LL") })
      assert on.cache_sim?
      refute off.cache_sim?
    end

    def parse(text)
      Rackbench::Experiment.parse("name: x\nservers: [puma]\napps: [rack-hello]\n#{text}", source: "e.yml")
    end

    it "reads instructions: { cache_sim: true } beside measure: instructions, into the fingerprint" do
      on = parse("measure: instructions\nload: { count: 100 }\ninstructions: { cache_sim: true }\n")
      off = parse("measure: instructions\nload: { count: 100 }\n")
      assert on.instructions_settings.cache_sim
      refute off.instructions_settings.cache_sim
      refute_equal on.fingerprint, off.fingerprint
      assert_equal off.fingerprint, parse("measure: instructions\nload: { count: 100 }\ninstructions: { cache_sim: false }\n").fingerprint
    end

    it "refuses the key without instructions trials, and a value that is not a boolean" do
      error = assert_raises(Rackbench::ConfigError) { parse("instructions: { cache_sim: true }\n") }
      assert_equal "e.yml: instructions: needs instructions trials: add measure: instructions (or [time, instructions])",
                   error.message
      error = assert_raises(Rackbench::ConfigError) { parse("measure: instructions\nload: { count: 9 }\ninstructions: { cache_sim: 1 }\n") }
      assert_match(/instructions.cache_sim: must be true or false/, error.message)
      error = assert_raises(Rackbench::ConfigError) { parse("measure: instructions\nload: { count: 9 }\ninstructions: { cach_sim: true }\n") }
      assert_match(/instructions.cach_sim: unknown key/, error.message)
    end
  end
end
