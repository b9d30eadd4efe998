# frozen_string_literal: true

require "test_helper"
require "json"

# Vernier's side of the profiler in the server (agent/profile.rb) and of
# the runner (Profile::VernierDump): the agent turns a Vernier result into
# frames and stacks with counts, keeping running samples only in cpu mode,
# and the runner reads that as it reads a StackProf dump. Vernier itself
# needs Ruby 3.2.1+; its result is faked here with the methods the agent
# calls (Vernier 1.x: threads with samples, weights and sample categories,
# a stack table of parents, frames and functions). A real Vernier profile
# of a server on a source-built 3.4 is test/integration/every_ruby_test.rb's.
describe "Vernier profiles" do
  require_relative "../../lib/rackbench/agent/profile"

  # Stacks: 0 = [main], 1 = [main, work], 2 = [main, sleep].
  FakeTable = Struct.new(:x) do
    def full_stack(idx) = { 0 => [0], 1 => [1, 0], 2 => [2, 0] }.fetch(idx)
    def stack_frame_idx(idx) = idx
    def frame_func_idx(frame) = frame
    def frame_line_no(frame) = [2, 6, 10].fetch(frame)
    def func_first_lineno(func) = [1, 5, 9].fetch(func)
    def func_name(func) = %w[main work sleep].fetch(func)
    def func_filename(func) = ["app.rb", "app.rb", "<cfunc>"].fetch(func)
  end
  FakeResult = Struct.new(:stack_table, :threads)

  def result
    FakeResult.new(FakeTable.new, {
                     1 => { samples: [1, 2, 1], weights: [3, 4, 1], sample_categories: [0, 1, 0],
                            allocations: { samples: [1], weights: [7] } },
                     2 => { samples: [2], weights: [2], sample_categories: [2] }
                   })
  end

  it "keeps running samples in cpu mode and every sample in wall mode, outermost frame first" do
    cpu = RackbenchProfile::Vernier.new("cpu", 1000).dump(result)
    wall = RackbenchProfile::Vernier.new("wall", 1000).dump(result)

    assert_equal [["main", "app.rb", 1], ["work", "app.rb", 5]], cpu["frames"]
    assert_equal [[[0, 1], 4]], cpu["stacks"]
    stacks = wall["stacks"].to_h { |ids, count| [ids.map { |i| wall["frames"][i][0] }, count] }
    assert_equal({ %w[main work] => 4, %w[main sleep] => 6 }, stacks)
  end

  it "samples allocations in object mode" do
    dump = RackbenchProfile::Vernier.new("object", 1).dump(result)
    assert_equal [[[0, 1], 7]], dump["stacks"]
  end

  it "is read back by the runner as a profile like StackProf's, and refuses other files" do
    dir = Dir.mktmpdir("rackbench-vernier")
    path = File.join(dir, "4242.vernier.json")
    File.write(path, JSON.generate(RackbenchProfile::Vernier.new("cpu", 1000).dump(result)))

    merged = Rackbench::Profile::VernierDump.read(path)

    assert_equal ["vernier", "cpu", 1000, 4], [merged.tool, merged.mode, merged.interval, merged.samples]
    assert_equal [{ "pid" => 4242, "samples" => 4 }], merged.processes
    assert_equal "work", merged.frames[merged.stacks.first.first.last]["name"]
    File.write(path, JSON.generate("tool" => "stackprof"))
    assert_raises(Rackbench::Profile::Error) { Rackbench::Profile::VernierDump.read(path) }
  ensure
    FileUtils.rm_rf(dir)
  end

  it "runs on CRuby 3.2.1 and later, refused before the run elsewhere" do
    settings = Rackbench::Profile::Settings.new(tool: "vernier")
    install = ->(engine, version) { Rackbench::Rubies::Install.new(name: "r", path: "/r", source: :path, engine: engine, version: version) }

    assert_nil settings.unsupported_reason(install.call("ruby", "3.4.5"))
    assert_equal "profile.tool vernier needs Ruby >= 3.2.1; r is ruby 3.1.2",
                 settings.unsupported_reason(install.call("ruby", "3.1.2"))
    assert_equal ['gem "vernier", ">= 1.0", require: false'], settings.gem_lines
  end
end
