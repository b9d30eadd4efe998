# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "io/wait"
require "rbconfig"

# The results store when its writer is killed with SIGKILL mid-save, for
# real, three times over.
describe "Rackbench::Store durability" do
  before do
    @tmp = Dir.mktmpdir("rackbench-store")
    @dir = File.join(@tmp, "results")
  end

  after do
    @store&.close
    FileUtils.rm_rf(@tmp)
  end

  def store
    @store ||= Rackbench::Store.open(@dir)
  end

  # Saves trials in a loop, skipping those already stored as a resumed run
  # does, and prints each key once its save has returned.
  def durability_child(blob_bytes)
    <<~RUBY
      require "rackbench"
      store = Rackbench::Store.open(ARGV[0])
      id = store.find_or_create_experiment(name: "k", fingerprint: "f", seed: 1, batches: 1,
                                           source_text: "", environment: {})
      done = store.finished_keys(id)
      $stdout.sync = true
      (1..).each do |i|
        next if done.include?("t\#{i}")

        store.save_trial(id, Rackbench::Trial::Record.new(
          key: "t\#{i}", kind: "http", status: "ok", batch: i,
          result: { "rps" => i * 1.5, "latency_us" => { "p99" => i }, "i" => i, "blob" => "x" * #{blob_bytes} }
        ))
        puts "saved t\#{i}"
      end
    RUBY
  end

  # Runs the child until it has reported +count+ saves, then kills it with
  # SIGKILL, most likely in the middle of a later save (the child runs
  # ahead of this reader). Returns the keys it reported.
  def run_and_kill(script, count)
    reader, writer = IO.pipe
    pid = Process.spawn(RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", script, @dir,
                        out: writer, err: File::NULL)
    writer.close
    reported = []
    wait_until(timeout_s: 15, message: "the child to save #{count} trials") do
      while reported.size < count && reader.wait_readable(0.05)
        line = reader.gets or flunk("the child exited after saving #{reported.inspect}")
        reported << line[/\Asaved (\S+)\n\z/, 1] || flunk("unexpected output #{line.inspect}")
      end
      reported.size >= count
    end
    reported
  ensure
    Process.kill(:KILL, pid) if pid
    Process.wait(pid) if pid
    reader&.close
  end

  # Every reported trial must be there after each kill, whole; no row may
  # be partial. Three kills, each resumed by the next child, so a save that
  # is not atomic has three chances to be caught half-done.
  it "keeps every trial whose save returned when the process is killed with SIGKILL" do
    blob_bytes = 50_000
    script = durability_child(blob_bytes)
    reported = []
    3.times { reported.concat(run_and_kill(script, 5)) }

    rows = store.trials
    keys = rows.map(&:key)
    assert_empty reported - keys, "every save that returned survived"
    assert_equal (1..rows.size).map { |i| "t#{i}" }, keys, "saved in order, none lost or duplicated"
    rows.each do |r|
      i = r.batch
      assert_equal [i * 1.5, { "p99" => i }, i, blob_bytes],
                   [r.rate, r.latency_us, r.result&.fetch("i"), r.result&.fetch("blob")&.size],
                   "trial #{r.key} is whole"
    end
    assert_equal "ok", store.db.fetch("PRAGMA integrity_check").single_value
  end
end
