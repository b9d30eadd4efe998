# frozen_string_literal: true

require "test_helper"

# What a profile's sample stands for (Profile::Merged#weight): StackProf's
# cpu mode fires at most once per kernel tick of CPU time, whatever the
# interval asked, so its samples weigh the CPU time the agent measured over
# the window over the samples; other profiles weigh the interval asked.
describe "the weight of a profile's samples" do
  def stackprof_results(mode:, interval:, samples:, cpu_us: nil)
    results = { mode: mode, interval: interval, samples: samples,
                frames: { 1 => { name: "Page#show", file: "app.rb", line: 3 } }, raw: [1, 1, samples] }
    results[:rackbench_cpu_us] = cpu_us if cpu_us
    results
  end

  def dump(**options)
    Rackbench::Profile::Dump.from_results(stackprof_results(**options), pid: 42)
  end

  it "weighs a cpu profile's samples by the CPU time measured, over every process that gave samples" do
    one = dump(mode: :cpu, interval: 100, samples: 250, cpu_us: 1_000_000)
    assert_equal [{ "pid" => 42, "samples" => 250, "cpu_us" => 1_000_000 }], one.processes
    assert_equal 4000.0, one.sample_us
    assert_equal 40_000.0, one.weight(10), "ten samples are 40 ms of CPU, not the 1 ms the interval asked"

    other = dump(mode: :cpu, interval: 100, samples: 750, cpu_us: 2_000_000)
    # An idle master: CPU time but no sample, so nothing to weigh.
    idle = Rackbench::Profile::Merged.new(tool: "stackprof", mode: "cpu", interval: 100, frames: [], stacks: [],
                                          processes: [{ "pid" => 1, "samples" => 0, "cpu_us" => 500_000 }])
    merged = Rackbench::Profile::Merged.merge([one, other, idle])
    assert_equal 3000.0, merged.sample_us
    assert_equal 3000.0, Rackbench::Profile::Merged.from_h(JSON.parse(JSON.generate(merged.to_h))).sample_us
  end

  it "weighs by the interval asked where nothing was measured, and in every other mode" do
    old = dump(mode: :cpu, interval: 1000, samples: 10)
    assert_nil old.sample_us
    assert_equal 5000, old.weight(5)
    wall = dump(mode: :wall, interval: 100, samples: 10, cpu_us: 1_000_000)
    assert_nil wall.sample_us, "the wall timer keeps its interval"
    assert_equal 500, wall.weight(5)
    mixed = Rackbench::Profile::Merged.merge([dump(mode: :cpu, interval: 1000, samples: 10, cpu_us: 40_000), old])
    assert_nil mixed.sample_us, "a process without its CPU time makes the measure partial: the interval, then"
  end
end
