# frozen_string_literal: true

require "test_helper"

# The instructions companion's part in one trial, against a trial
# directory of its own and no process: the engine's settings it fills in
# (the think time, the warmup, the experiment's seed in every batch, the
# gate once the trial's server is up and never for the calibration's or an
# examination's), the server's variables that load the GC agent, and the
# window's start, which it marks itself before its switch (the agents' GC
# must run before the instrumentation goes on) while the window companion's
# mark after it keeps that first reading.
Rackbench::Trial::Http::Companions.load_all

describe "the instructions companion" do
  let(:dir) { Dir.mktmpdir("rackbench-instructions-companion") }
  let(:marks) { Rackbench::Trial::Http::WindowMarks.new(dir).tap(&:reset!) }
  let(:valgrind) { Rackbench::Instructions::Valgrind.new(program: "/fake/valgrind", vgdb: "/fake/vgdb") }
  let(:config) { Struct.new(:load).new({ count: 500 }) }
  # A server no process of which runs under valgrind: no pid this large exists.
  let(:booted) do
    server = Struct.new(:pid, :pgid).new(4_194_000, 4_194_000)
    Struct.new(:server, :identity).new(server, {})
  end
  after do
    marks.close
    FileUtils.rm_rf(dir)
  end

  def part(examining: false)
    Rackbench::Trial::Http::Companions::Instructions::Part.new(
      dir: File.join(dir, "instructions"), valgrind: valgrind, config: config, examining: examining,
      window: marks, trial_dir: dir, seed: 7
    )
  end

  def open_settings
    { think_s: nil, warmup_count: nil, seed: 7 + 3 }
  end

  it "fills in the think time, the warmup and the experiment's seed, and gates only the trial's booted server" do
    counting = part
    counting.before_boot
    calibration = counting.engine_settings(open_settings)
    assert_equal({ think_s: 0.01, warmup_count: 1000, seed: 7 }, calibration, "the calibration's server is not gated")
    counting.after_boot(booted)
    quiet = File.join(dir, "instructions", "quiet.pids")
    assert_equal calibration.merge(quiet_pids_file: quiet), counting.engine_settings(open_settings)
    assert File.file?(quiet), "the gate's pids are written for the warmup"
    given = counting.engine_settings(think_s: 0.0, warmup_count: 2000, seed: 10)
    assert_equal [0.0, 2000], given.values_at(:think_s, :warmup_count), "what the file sets stays"
  end

  it "leaves an examination's server as a time trial's: no valgrind, no agent, no gate, the batch's seed" do
    examined = part(examining: true)
    examined.after_boot(booted)
    assert_equal({ think_s: 0.01, warmup_count: 1000, seed: 10 }, examined.engine_settings(open_settings))
    assert_empty examined.launch_prefix
    assert_empty examined.env
    assert_equal 5, examined.ready_timeout_s(5)
  end

  it "loads the GC agent on the window channel, FIFOs where its pipes cannot reach" do
    assert_equal({ "RACKBENCH_WINDOW" => "1", "RACKBENCH_INSTRUCTIONS_GC" => "1", "RACKBENCH_WINDOW_FIFO" => "1" },
                 part.env["trial"])
  end

  it "marks the window's start before its switch, and the window companion's mark keeps that reading" do
    counting = part
    counting.before_boot
    counting.after_boot(booted)
    counting.window_started
    assert marks.marked?(:start), "the agents are woken before the instrumentation goes on"
    first = File.read(File.join(marks.dir, "window.start"))
    window_part = Rackbench::Trial::Http::Companions::Window::Part.new(marks)
    window_part.window_started
    assert_equal first, File.read(File.join(marks.dir, "window.start")), "the start is marked once"
    outcome = counting.document({ status: "ok", result: { "requests" => 500 } })
    assert_equal ["failed", "instructions: no process of the server runs under valgrind"],
                 outcome.values_at(:status, :reason)
  end

  it "orders its part first at each edge: before the marks the server's processes watch" do
    assert_operator Rackbench::Trial::Http::Companions::Instructions::ORDER, :<,
                    Rackbench::Trial::Http::Companions::Window::ORDER
  end
end
