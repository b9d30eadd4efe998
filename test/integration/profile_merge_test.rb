# frozen_string_literal: true

require "test_helper"
require_relative "../support/real_profiles"

# Reading StackProf dumps and merging them (Profile::Dump, Profile::Merged),
# from real profiles made in the test process and in a forked child.
describe "profile dumps and their merging" do
  let(:dir) { Dir.mktmpdir("rackbench-profile") }
  after { FileUtils.rm_rf(dir) }

  it "reads a dump's raw stacks: every sample counted once, frames named" do
    results = RealProfiles.work(outer: 300, inner: 700)
    profile = Rackbench::Profile::Dump.read(RealProfiles.dump(dir, 4242, results))
    assert_equal results[:samples], profile.samples
    assert_equal [{ "pid" => 4242, "samples" => results[:samples] }], profile.processes
    assert_equal ["stackprof", "object", 1], [profile.tool, profile.mode, profile.interval]
    # Each allocation is one sample: at least the strings the methods made.
    assert_operator RealProfiles.self_samples(profile, "RealProfiles::ProfileWork#inner"), :>=, 700
    assert_operator RealProfiles.self_samples(profile, "RealProfiles::ProfileWork#outer"), :>=, 300
    stack = profile.stacks.max_by { |_, count| count }.first
    assert_equal "RealProfiles::ProfileWork#inner", profile.frames[stack.last]["name"], "the leaf is last"
    names = stack.map { |i| profile.frames[i]["name"] }
    assert_operator names.index("RealProfiles::ProfileWork#outer"), :<, names.index("RealProfiles::ProfileWork#inner"),
                    "the caller before the callee"
  end

  it "refuses a file that is not a StackProf dump, and results taken without raw" do
    path = File.join(dir, "1.stackprof.dump")
    File.write(path, "not marshal")
    assert_raises(Rackbench::Profile::Error) { Rackbench::Profile::Dump.read(path) }
    no_raw = StackProf.run(mode: :object, interval: 1) { String.new("x") }
    error = assert_raises(Rackbench::Profile::Error) { Rackbench::Profile::Dump.from_results(no_raw) }
    assert_match(/raw: true/, error.message)
  end

  it "reads the dump of a process that took no sample (an idle master) as an empty profile, merged like any" do
    idle = StackProf.run(mode: :cpu, interval: 1000, raw: true) { nil }
    skip "StackProf sampled an empty block" unless idle[:samples].zero?
    empty = Rackbench::Profile::Dump.read(RealProfiles.dump(dir, 7, idle))
    assert_equal [0, [], [{ "pid" => 7, "samples" => 0 }]], [empty.samples, empty.stacks, empty.processes]
    busy = Rackbench::Profile::Dump.from_results(RealProfiles.work)
    busy = Rackbench::Profile::Merged.new(tool: "stackprof", mode: "cpu", interval: 1000, frames: busy.frames,
                                          stacks: busy.stacks, processes: busy.processes)
    assert_equal busy.samples, Rackbench::Profile::Merged.merge([empty, busy]).samples
  end

  it "merges the dumps of two processes: the same frames become one, samples add up" do
    dir # made here, not in the child
    reader, writer = IO.pipe
    child = fork do
      reader.close
      RealProfiles.dump(dir, Process.pid, RealProfiles.work(outer: 100, inner: 200))
      writer.puts Process.pid
      exit!(0)
    end
    writer.close
    child_pid = reader.read.to_i
    Process.wait(child)
    mine = RealProfiles.dump(dir, Process.pid, RealProfiles.work(outer: 300, inner: 700))
    a = Rackbench::Profile::Dump.read(mine)
    b = Rackbench::Profile::Dump.read(File.join(dir, "#{child_pid}.stackprof.dump"))
    merged = Rackbench::Profile::Merged.merge([a, b])

    assert_equal a.samples + b.samples, merged.samples
    assert_equal [Process.pid, child_pid], merged.processes.map { |p| p["pid"] }
    names = merged.frames.map { |f| [f["name"], f["file"], f["line"]] }
    assert_equal names.uniq, names, "no frame twice"
    assert_equal (a.frames + b.frames).map { |f| [f["name"], f["file"], f["line"]] }.uniq.sort_by(&:to_s),
                 names.sort_by(&:to_s)
    %w[RealProfiles::ProfileWork#inner RealProfiles::ProfileWork#outer].each do |name|
      assert_equal RealProfiles.self_samples(a, name) + RealProfiles.self_samples(b, name),
                   RealProfiles.self_samples(merged, name), name
    end
    assert_equal merged.stacks.map(&:first).uniq.size, merged.stacks.size, "identical stacks add up into one"
  end

  it "keeps a merged profile through its JSON form, and refuses to merge profiles taken differently" do
    profile = Rackbench::Profile::Dump.from_results(RealProfiles.work)
    back = Rackbench::Profile::Merged.from_h(JSON.parse(JSON.generate(profile.to_h)))
    assert_equal profile.to_h, back.to_h
    wall = Rackbench::Profile::Merged.new(tool: "stackprof", mode: "wall", interval: 1000, frames: [], stacks: [])
    error = assert_raises(Rackbench::Profile::Error) { Rackbench::Profile::Merged.merge([profile, wall]) }
    assert_match(/cannot merge a stackprof wall profile/, error.message)
  end
end
