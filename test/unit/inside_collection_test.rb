# frozen_string_literal: true

require "test_helper"
require "json"

# The runner's collection of the counting agent's files after the window
# (Trial::Http::HttpInside::Collection), against a fake /proc tree and trial
# directory, and the document stored from them (HttpInside::Document).
describe Rackbench::Trial::Http::Inside::Collection do
  HttpInside = Rackbench::Trial::Http::Inside
  let(:root) { Dir.mktmpdir("rackbench-inside-collection") }
  let(:proc_dir) { File.join(root, "proc") }
  let(:trial_dir) { File.join(root, "trial") }
  let(:inside_dir) { File.join(trial_dir, "inside") }
  let(:identity_dir) { File.join(trial_dir, "identity") }
  let(:ruby) { File.realpath(RbConfig.ruby) }
  let(:server) { Struct.new(:pid, :pgid).new(100, 100) }
  let(:identity) { { "exe" => ruby, "others" => [{ "pid" => 105, "ppid" => 100, "command" => "helper" }] } }
  after { FileUtils.rm_rf(root) }

  before do
    FileUtils.mkdir_p([inside_dir, identity_dir])
  end

  # A live process of the tree: its stat line and its executable.
  def process(pid, ppid:, exe: ruby, reported: true)
    dir = File.join(proc_dir, pid.to_s)
    FileUtils.mkdir_p(dir)
    fields = ["S", ppid, 100, 100, 0, -1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 20, 0, 1, 0, 100, 0, 10, 0]
    File.write(File.join(dir, "stat"), "#{pid} (ruby) #{fields.join(" ")}\n")
    File.symlink(exe, File.join(dir, "exe"))
    report(pid, ppid) if reported
  end

  def report(pid, ppid)
    File.write(File.join(identity_dir, "#{pid}.json"), JSON.generate("pid" => pid, "ppid" => ppid))
  end

  def counts(pid, role: "worker", **fields)
    data = { "pid" => pid, "ppid" => 100, "role" => role, "started_at_s" => 1.0, "ended_at_s" => 3.0,
             "duration_s" => 2.0, "allocated_objects" => 1000 * pid }.merge(fields.transform_keys(&:to_s))
    File.write(File.join(inside_dir, "#{pid}.counts.json"), JSON.generate(data))
    data
  end

  def collection(deadline_s: 30)
    HttpInside::Collection.new(server: server, trial_dir: trial_dir, identity: identity, deadline_s: deadline_s,
                           proc_dir: proc_dir)
  end

  it "collects every process's counts, and says which of the tree gave none and why" do
    process(100, ppid: 1)
    process(101, ppid: 100)
    process(102, ppid: 100)                      # reported, never counts
    process(103, ppid: 100, reported: false)     # forked in C
    process(104, ppid: 100, exe: "/bin/sh", reported: false) # not the server's ruby
    process(105, ppid: 100, reported: false)     # a helper the server exec'd
    process(106, ppid: 100)                      # a counts file that is not the agent's
    report(200, 100)                             # reported, exited
    master = counts(100, role: "master")
    worker = counts(101)
    File.write(File.join(inside_dir, "106.counts.json"), "{\"pid\": 106}")
    found, missing = collection(deadline_s: 0.2).collect
    assert_equal [master, worker], found.sort_by { |c| c["pid"] }
    assert_equal({ 102 => "no counts within 0.2 s after the window ended",
                   103 => "no identity report: forked outside Ruby (in C), so no agent runs in it",
                   106 => "its counts file is not the agent's counts",
                   200 => "exited before its counts were written" },
                 missing.to_h { |m| [m["pid"], m["reason"]] })
  end

  it "waits for the counts of a reporting process still writing them" do
    process(100, ppid: 1)
    process(101, ppid: 100)
    counts(100, role: "master")
    result = nil
    collector = Thread.new { result = collection.collect }
    # Asleep between polls: it found 101 without counts and waits.
    wait_until(message: "the collection to poll") { collector.status == "sleep" }
    counts(101)
    collector.join
    found, missing = result
    assert_equal [100, 101], found.map { |c| c["pid"] }.sort
    assert_empty missing
  end

  describe HttpInside::Document do
    it "holds the engine's window, the processes by pid with the agent's keys only, and the missing" do
      worker = { "pid" => 9, "role" => "worker", "duration_s" => 2.0, "gc" => { "count" => 3 }, "junk" => 1 }
      master = { "pid" => 8, "role" => "master", "duration_s" => 2.1 }
      doc = HttpInside::Document.build(counts: [worker, master], missing: [{ "pid" => 11, "reason" => "b" },
                                                                       { "pid" => 10, "reason" => "a" }],
                                   requests: 4000, duration_s: 2.0)
      assert_equal({ "agent" => "counting", "window" => { "requests" => 4000, "duration_s" => 2.0 },
                     "processes" => [master, worker.except("junk")],
                     "missing" => [{ "pid" => 10, "reason" => "a" }, { "pid" => 11, "reason" => "b" }] }, doc)
    end

    it "takes only counts the agent wrote: a pid, a role, a positive duration" do
      good = { "pid" => 1, "role" => "single", "duration_s" => 0.5 }
      assert HttpInside::Document.valid?(good)
      refute HttpInside::Document.valid?(good.merge("role" => "boss"))
      refute HttpInside::Document.valid?(good.merge("duration_s" => 0))
      refute HttpInside::Document.valid?(good.merge("pid" => "1"))
      refute HttpInside::Document.valid?([good])
    end
  end
end
