# frozen_string_literal: true

require "test_helper"

# Watchdog against a fake guard (test/fixtures/fake_guard): the marker, the
# arguments and environment the guard gets, how its answers become counts
# or errors. The real guard's sweeps are in test/integration/watchdog_test.rb.
describe Rackbench::Watchdog do
  let(:fake) { File.expand_path("../fixtures/fake_guard", __dir__) }
  let(:dir) { Dir.mktmpdir("rackbench-watchdog") }
  let(:record) { File.join(dir, "record") }
  let(:results) { File.join(dir, "results") }

  before do
    ENV["FAKE_GUARD_RECORD"] = record
    # The caller carrying the marker itself must not pass it to the guard.
    ENV[Rackbench::Watchdog::MARKER] = results
  end

  after do
    %w[FAKE_GUARD_RECORD FAKE_GUARD_MODE].each { |key| ENV.delete(key) }
    ENV.delete(Rackbench::Watchdog::MARKER)
    FileUtils.rm_rf(dir)
  end

  # What the fake recorded: { "arg" => [...], "pid" => "123", ... }.
  def recorded
    File.readlines(record, chomp: true).each_with_object(Hash.new { |h, k| h[k] = [] }) do |line, seen|
      key, value = line.split("=", 2)
      seen[key] << value
    end
  end

  describe ".marker_env" do
    it "is the absolute, normalised results directory" do
      Dir.chdir(dir) do
        expected = File.join(File.realpath(dir), "res")
        assert_equal({ "RACKBENCH_RESULTS_DIR" => expected }, Rackbench::Watchdog.marker_env("res"))
        assert_equal({ "RACKBENCH_RESULTS_DIR" => expected }, Rackbench::Watchdog.marker_env("res/"))
        assert_equal({ "RACKBENCH_RESULTS_DIR" => expected }, Rackbench::Watchdog.marker_env("./x/../res"))
      end
      assert_equal "RACKBENCH_RESULTS_DIR", Rackbench::Watchdog::MARKER
    end
  end

  describe ".sweep" do
    it "runs the guard's --sweep with the marker entry and grace in ms, without the marker, and returns its counts" do
      counts = Rackbench::Watchdog.sweep(results_dir: results, grace_s: 1.5, binary: fake)
      assert_equal({ termed: 2, killed: 1, survivors: 0 }, counts)
      seen = recorded
      assert_equal ["--sweep", "RACKBENCH_RESULTS_DIR=#{results}", "1500"], seen["arg"]
      assert_equal ["unset"], seen["marker"]
    end

    it "rounds the grace to whole milliseconds, zero included" do
      Rackbench::Watchdog.sweep(results_dir: results, grace_s: 0, binary: fake)
      assert_equal "0", recorded["arg"].last
      Rackbench::Watchdog.sweep(results_dir: results, grace_s: 0.0004, binary: fake)
      assert_equal "0", recorded["arg"].last
      Rackbench::Watchdog.sweep(results_dir: results, grace_s: 10, binary: fake)
      assert_equal "10000", recorded["arg"].last
    end

    it "refuses a negative or non-numeric grace and an empty results directory" do
      assert_raises(ArgumentError) { Rackbench::Watchdog.sweep(results_dir: results, grace_s: -1, binary: fake) }
      assert_raises(ArgumentError) { Rackbench::Watchdog.sweep(results_dir: results, grace_s: "soon", binary: fake) }
      assert_raises(ArgumentError) { Rackbench::Watchdog.sweep(results_dir: "", grace_s: 1, binary: fake) }
      refute File.exist?(record), "the guard ran"
    end

    it "says to run bin/setup when the guard is not built" do
      missing = File.join(dir, "rackbench-guard")
      error = assert_raises(Rackbench::Watchdog::GuardMissing) do
        Rackbench::Watchdog.sweep(results_dir: results, grace_s: 1, binary: missing)
      end
      assert_kind_of Rackbench::Error, error
      assert_equal "rackbench-guard not found at #{missing}: run bin/setup", error.message
    end

    it "turns the guard's failure line into one Failed line" do
      ENV["FAKE_GUARD_MODE"] = "fail"
      error = assert_raises(Rackbench::Watchdog::Failed) do
        Rackbench::Watchdog.sweep(results_dir: results, grace_s: 1, binary: fake)
      end
      assert_kind_of Rackbench::Error, error
      assert_equal "watchdog sweep failed: rackbench-guard: sweep failed: cannot read /proc: Permission denied",
                   error.message
    end

    it "refuses output that is not the counts" do
      %w[garbage partial].each do |mode|
        ENV["FAKE_GUARD_MODE"] = mode
        error = assert_raises(Rackbench::Watchdog::Failed) do
          Rackbench::Watchdog.sweep(results_dir: results, grace_s: 1, binary: fake)
        end
        assert_match(/\Awatchdog sweep: unexpected output "[^\n]*"\z/, error.message)
      end
    end
  end

  describe ".start and #stop" do
    it "starts --watch in a group of its own, without the marker, and #stop returns its counts" do
      watchdog = Rackbench::Watchdog.start(results_dir: results, grace_s: 2, binary: fake)
      begin
        assert watchdog.alive?, "the watchdog waits for its stdin to end"
        assert_equal({ termed: 2, killed: 1, survivors: 0 }, watchdog.stop)
        refute watchdog.alive?
        seen = recorded
        assert_equal ["--watch", "RACKBENCH_RESULTS_DIR=#{results}", "2000"], seen["arg"]
        assert_equal [watchdog.pid.to_s], seen["pid"]
        assert_equal [watchdog.pid.to_s], seen["pgid"]
        assert_equal ["unset"], seen["marker"]
        assert_equal ["/"], seen["cwd"]
        # Twice: the same answer, nothing run again.
        File.delete(record)
        assert_equal({ termed: 2, killed: 1, survivors: 0 }, watchdog.stop)
        refute File.exist?(record)
        assert_raises(Errno::ECHILD) { Process.wait(watchdog.pid) }
      ensure
        watchdog.stop
      end
    end

    it "returns nil from #stop before #start" do
      watchdog = Rackbench::Watchdog.new(results_dir: results, grace_s: 1, binary: fake)
      assert_nil watchdog.stop
      refute watchdog.alive?
    end

    it "reports a watchdog that died before #stop" do
      ENV["FAKE_GUARD_MODE"] = "die"
      watchdog = Rackbench::Watchdog.start(results_dir: results, grace_s: 1, binary: fake)
      wait_until(message: "the fake to exit") { !watchdog.alive? }
      error = assert_raises(Rackbench::Watchdog::Failed) { watchdog.stop }
      assert_equal "watchdog --watch failed: rackbench-guard: something broke", error.message
      assert_nil watchdog.stop
    end

    it "says to run bin/setup when the guard is not built" do
      error = assert_raises(Rackbench::Watchdog::GuardMissing) do
        Rackbench::Watchdog.start(results_dir: results, grace_s: 1, binary: File.join(dir, "none"))
      end
      assert_match(/run bin\/setup\z/, error.message)
    end

    it "refuses a second start" do
      watchdog = Rackbench::Watchdog.start(results_dir: results, grace_s: 1, binary: fake)
      begin
        assert_raises(Rackbench::Error) { watchdog.start }
      ensure
        watchdog.stop
      end
    end
  end
end
