# frozen_string_literal: true

require "test_helper"

# Callgrind's files read (Instructions::CallgrindFile: totals, names
# defined once and referred to by id, a call's inclusive cost kept out of
# the caller's own) and a trial's directory of them turned into the
# record's instructions document (Instructions::Collection): every
# process's count, the processes summing to the total, per request, and
# the costliest functions with their recursion levels merged.
# test/fixtures/callgrind: a master (4001), a worker's dump at the end edge
# (4002) and a worker that exited in the window (4003), plus the empty
# files processes create at their start.
describe "instructions: callgrind's files and the document" do
  let(:fixtures) { File.expand_path("../fixtures/callgrind", __dir__) }

  describe Rackbench::Instructions::CallgrindFile do
    it "reads the process, its total and each function's own cost, a call's cost left to its callee" do
      file = Rackbench::Instructions::CallgrindFile.read(File.join(fixtures, "callgrind.4001.1"))
      assert_equal 4001, file.pid
      assert_match(/launcher\.rb puma/, file.command)
      assert_equal 1000, file.total
      costs = file.functions.to_h { |f, cost| [[File.basename(f.object), f.name], cost] }
      assert_equal({ %w[libruby-3.1.so.3.1.2 vm_exec_core] => 600, %w[libruby-3.1.so.3.1.2 rb_hash_aref] => 250,
                     %w[libc.so.6 malloc] => 100, %w[libc.so.6 vm_exec_core'2] => 50 }, costs)
      assert_equal file.total, file.functions.values.sum
    end

    it "reads compressed positions and a file without a summary" do
      file = Rackbench::Instructions::CallgrindFile.read(File.join(fixtures, "callgrind.4002.1"))
      assert_equal [4002, 5000, 5000], [file.pid, file.total, file.functions.values.sum]
    end

    it "takes a process's file created at its start as empty, and refuses what is not callgrind's" do
      assert Rackbench::Instructions::CallgrindFile.read(File.join(fixtures, "callgrind.4001")).empty?
      error = assert_raises(Rackbench::Instructions::Error) do
        Rackbench::Instructions::CallgrindFile.read(File.expand_path("../fixtures/callgrind_garbage.txt", __dir__))
      end
      assert_match(/is not callgrind's output/, error.message)
      assert_raises(Rackbench::Instructions::Error) { Rackbench::Instructions::CallgrindFile.read("/nonexistent/cg") }
    end
  end

  describe Rackbench::Instructions::Collection do
    let(:identity) do
      { "processes" => [{ "pid" => 4001, "event" => "exec" }, { "pid" => 4002, "event" => "fork" },
                        { "pid" => 4003, "event" => "fork" }] }
    end
    let(:document) do
      Rackbench::Instructions::Collection.new(dir: fixtures, valgrind_version: "3.19.0")
                                         .document(requests: 10, identity: identity, main_pid: 4001)
    end

    it "sums every process's count of the window, divided by the window's responses" do
      assert_equal ["callgrind", "3.19.0", 10, 8000, 800.0],
                   document.values_at("tool", "valgrind", "requests", "instructions", "per_request")
      processes = document["processes"]
      assert_equal [[4001, "main", 1000], [4002, "worker", 5000], [4003, "worker", 2000]],
                   processes.map { |p| p.values_at("pid", "role", "instructions") }
      assert_equal document["instructions"], processes.sum { |p| p["instructions"] }, "the processes sum to the total"
      assert_equal ["ruby3.1 puma"], processes.map { |p| p["program"] }.uniq
      assert_equal 500.0, processes[1]["per_request"]
    end

    it "lists the costliest functions over the processes, recursion levels and a JIT's code merged" do
      functions = document["functions"].map { |f| f.values_at("object", "name", "instructions") }
      assert_equal [["libruby-3.1.so.3.1.2", "vm_exec_core", 6300], ["libc.so.6", "malloc", 700],
                    ["libruby-3.1.so.3.1.2", "0x000000000024e22b", 400], ["???", "(JIT-compiled code)", 300],
                    ["libruby-3.1.so.3.1.2", "rb_hash_aref", 250], ["libc.so.6", "vm_exec_core", 50]], functions
      assert_equal 630.0, document["functions"].first["per_request"]
    end

    it "leaves out a program that started during the window (a helper the server runs on the clock)" do
      doc = Rackbench::Instructions::Collection.new(dir: fixtures).document(requests: 10, identity: identity,
                                                                            main_pid: 4001, started_pids: [4001, 4002])
      assert_equal [4001, 4002, 4003], doc["processes"].map { |p| p["pid"] }, "a worker forked in the window counts"
      assert_empty doc["left_out"]
      helpers = Rackbench::Instructions::Collection.new(dir: fixtures).document(requests: 10, started_pids: [4001, 4002])
      assert_equal [4003], helpers["left_out"].map { |p| p["pid"] }
      assert_equal 6000, helpers["instructions"]
      assert_equal helpers["instructions"], helpers["functions"].sum { |f| f["instructions"] }
    end

    it "names a process no identity report covers a program, and fails when no process counted" do
      doc = Rackbench::Instructions::Collection.new(dir: fixtures).document(requests: 10)
      assert_equal %w[program program program], doc["processes"].map { |p| p["role"] }
      Dir.mktmpdir do |empty|
        File.write(File.join(empty, "callgrind.77"), "")
        error = assert_raises(Rackbench::Instructions::Error) do
          Rackbench::Instructions::Collection.new(dir: empty).document(requests: 10)
        end
        assert_match(/callgrind wrote no counts/, error.message)
      end
    end
  end
end
