# frozen_string_literal: true

require "test_helper"
require "objspace"
require_relative "../../lib/rackbench/agent/profile"

# The allocation census (agent/allocation_census.rb), run in this process
# as a server process runs it: the GC off and objspace tracing on over a
# span, every object of the span counted by its class, the counts scaled
# to the window's allocations, and the GC and tracing as they were after.
describe RackbenchProfile::AllocationCensus do
  class CensusWidget; end
  class CensusGadget; end

  let(:dir) { Dir.mktmpdir("rackbench-census") }
  after { FileUtils.rm_rf(dir) }

  def read_dump(path)
    data = JSON.parse(File.read(path))
    [data, data["frames"].zip(data["stacks"]).to_h { |(name, _file, _line), (_ids, objects)| [name, objects] }]
  end

  # Allocates while keeping nothing: the objects die at once, so only a
  # census that counts with the GC off can see them all.
  def allocate(klass, count)
    count.times { klass.new }
  end

  it "counts every object of a span by its class, dead ones too, and puts the GC and tracing back" do
    gc_disabled_before = GC.disable
    GC.enable unless gc_disabled_before
    census = RackbenchProfile::AllocationCensus.new("object", 1, span_objects: 10_000_000)
    census.window_started(dir)
    allocate(CensusWidget, 3000)
    allocate(CensusGadget, 1000)
    path = census.window_ended(dir)

    data, by_class = read_dump(path)
    assert_equal ["objspace", "object", 1], data.values_at("tool", "mode", "interval")
    # The span was the whole window: nothing scaled, every object counted.
    assert_equal 3000, by_class.fetch("CensusWidget")
    assert_equal 1000, by_class.fetch("CensusGadget")
    assert_in_delta 1.0, data["span"]["scale"], 0.01
    assert_equal data["span"]["objects"], by_class.values.sum
    refute GC.disable, "the GC is on again"
    GC.enable
    assert_nil ObjectSpace.allocation_generation(Object.new), "tracing is off"
  ensure
    GC.disable if gc_disabled_before
  end

  it "ends its span after span_objects and scales the span's counts to the whole window" do
    census = RackbenchProfile::AllocationCensus.new("object", 1, span_objects: 2_000)
    census.window_started(dir)
    thread = census.instance_variable_get(:@span)[:thread]
    allocate(CensusWidget, 1000) while thread.alive?
    refute GC.disable, "the GC is on again once the span ended"
    GC.enable
    allocate(CensusWidget, 18_000)
    allocate(CensusGadget, 10_000)
    _, by_class = read_dump(census.window_ended(dir))

    # The span saw widgets only: the window's 3 in 10 gadgets are the
    # sample's blind spot, and the scaled widgets stand for all the
    # window's objects.
    refute by_class.key?("CensusGadget")
    assert_operator by_class.fetch("CensusWidget"), :>, 28_000
  end

  it "leaves the GC off for a server that turned it off" do
    GC.disable
    census = RackbenchProfile::AllocationCensus.new("object", 1)
    census.window_started(dir)
    allocate(CensusWidget, 10)
    census.window_ended(dir)
    assert GC.enable, "the GC is still off"
  ensure
    GC.enable
  end

  it "scales a span's counts to the window, the objects it cannot name as one internal row (pure)" do
    census = RackbenchProfile::AllocationCensus.new("object", 1)
    data = census.dump({ "objects" => 100, "by_class" => { "String" => 60, "Hash" => 30 } }, 1000)
    assert_equal [["String", "(allocated class)", 0], ["Hash", "(allocated class)", 0],
                  [RackbenchProfile::AllocationCensus::INTERNAL_NAME, "(allocated class)", 0]], data["frames"]
    assert_equal [[[0], 600], [[1], 300], [[2], 100]], data["stacks"]
    assert_equal({ "objects" => 100, "counted" => 90, "window_objects" => 1000, "scale" => 10.0 }, data["span"])
  end

  it "is what RACKBENCH_PROFILE=objspace:object:1 installs, and the collector reads its dump" do
    assert_kind_of RackbenchProfile::AllocationCensus, RackbenchProfile.listener("objspace:object:1")
    census = RackbenchProfile::AllocationCensus.new("object", 1)
    census.window_started(dir)
    allocate(CensusWidget, 500)
    path = census.window_ended(dir)
    assert path.end_with?("#{Process.pid}.objspace.json")

    profile = Rackbench::Profile::ObjspaceDump.read(path)
    assert_equal %w[objspace object], [profile.tool, profile.mode]
    widget = profile.frames.index { |frame| frame["name"] == "CensusWidget" }
    assert_equal 500, profile.stacks.find { |ids, _| ids == [widget] }.last
    assert_equal "objects", profile.unit
  end
end
