# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# `rackbench micro fibers` as a user runs it: real rubies, the real script,
# the results store, Ctrl-C, kill -9 and timeouts. Sizes are tiny: these
# tests check accounting and process hygiene, never speed.
describe "rackbench micro fibers (integration)" do
  let(:dir) { Dir.mktmpdir("rackbench-micro") }
  let(:results) { File.join(dir, "results") }
  let(:jruby) { "/usr/bin/jruby" }

  after { FileUtils.rm_rf(dir) }

  def stored
    return [] unless File.exist?(File.join(results, "results.db"))

    Rackbench::Store.open(results) { |store| store.trials }
  end

  # Every process of a run of this test: each benchmark (and every worker
  # it forks) carries RACKBENCH_TRIAL_DIR under the results directory.
  def micro_processes
    Dir.glob("/proc/[0-9]*/environ").select do |path|
      File.binread(path).include?("RACKBENCH_TRIAL_DIR=#{results}")
    rescue SystemCallError
      false
    end
  end

  def assert_no_processes_left(timeout_s: 15)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
    sleep 0.05 until micro_processes.empty? || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    assert_empty micro_processes, "benchmark processes still alive"
  end

  def reap(pid)
    Process.kill(:KILL, -pid)
    Process.wait(pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end

  it "runs every mode and worker count per batch, stores the trials, reports them, and resumes nothing twice" do
    args = ["micro", "fibers", "--ruby", "ruby", "--workers", "1,3", "--messages", "20", "--batches", "2",
            "--results", results]
    out, err, status = rackbench(*args)
    assert status.success?, "#{err}\n#{out}"
    trials = stored
    assert_equal 12, trials.size
    assert_equal 12, trials.map { |t| t.key }.uniq.size
    assert(trials.all? { |t| t.status == "ok" }, trials.map { |t| t.reason }.compact.join("\n"))
    assert_equal %w[fibers processes threads], trials.map { |t| t.server }.uniq.sort
    assert(trials.all? { |t| t.requests == 20 * t.dims["workers"] && t.rate.positive? })
    assert(trials.select { |t| t.server == "processes" }.all? { |t| t.processes == t.dims["workers"] })
    assert_match(/\[\S+\] +1\/12 ruby=ruby mode=\w+ workers=\d batch 1 \.\.\. ok [\d.]+ msg\/s/, out)
    # The shared report: one row per (mode, workers) with 2 batches, in msg/s.
    assert_match(/\| fibers +\| 1 +\| 1 +\| 3 +\| +2 \| +\d+ \|/, out)
    assert_match(/Median msg\/s:/, out)
    assert File.size?(File.join(results, "report.html")), "writes report.html"
    assert_match(/12 ok, 0 failed/, out)

    _out, err, status = rackbench(*args)
    assert_equal 2, status.exitstatus
    assert_match(/already holds 12 trials.*--resume/, err)
    out, _err, status = rackbench(*args, "--resume")
    assert status.success?
    assert_match(/12 already stored, 0 to run/, out)

    json, err, status = rackbench("report", "--results", results, "--json")
    assert status.success?, err
    report = JSON.parse(json)
    assert_equal 12, report["trials"].size
    assert_equal 6, report["configs"].size
    assert_empty micro_processes
  end

  it "prints the stored trials as JSON, progress on stderr" do
    out, err, status = rackbench("micro", "fibers", "--modes", "fibers", "--workers", "2", "--messages", "10",
                                 "--batches", "1", "--results", results, "--json")
    assert status.success?, err
    doc = JSON.parse(out)
    assert_equal "micro-fibers", doc["experiment"]["name"]
    trial = doc["trials"].fetch(0)
    assert_equal ["fibers", "micro-fibers", "ok", 20], trial.values_at("server", "app", "status", "requests")
    assert_equal "msg/s", doc["rate_unit"]
    assert_equal 20.0 / doc["configs"][0]["rps_median"], 20.0 / trial["rps"]
    assert_match(/1 ok, 0 failed/, err)
  end

  it "after Ctrl-C stops the running benchmark and its workers, and --resume finishes the plan" do
    args = ["micro", "fibers", "--ruby", "ruby", "--workers", "3", "--messages", "5000", "--batches", "2",
            "--results", results]
    pid = spawn_rackbench(*args)
    begin
      wait_until(timeout_s: 120, interval_s: 0.01, message: "a stored trial and a running benchmark") do
        stored.size >= 1 && !micro_processes.empty?
      end
      Process.kill(:INT, pid)
      _, status = Process.wait2(pid)
      assert_equal 130, status.exitstatus
    ensure
      reap(pid)
    end
    assert_no_processes_left
    before = stored.size
    assert_operator before, :<, 6
    assert_equal ["interrupted"], Rackbench::Store.open(results, &:runs).map { |r| r[:status] }

    out, err, status = rackbench(*args, "--resume")
    assert status.success?, "#{err}\n#{out}"
    assert_match(/#{6 - before} to run/, out)
    assert_equal 6, stored.map { |t| t.key }.uniq.size
    assert_equal 6, stored.size
    assert_empty micro_processes
  end

  it "takes a killed rackbench's benchmark down with it (kill -9)" do
    pid = spawn_rackbench("micro", "fibers", "--modes", "processes", "--workers", "4", "--messages", "1000",
                          "--warmup", "100000", "--batches", "1", "--results", results)
    begin
      wait_until(timeout_s: 60, interval_s: 0.01, message: "a running benchmark with its workers") do
        micro_processes.size >= 5
      end
      Process.kill(:KILL, pid)
      Process.wait(pid)
    ensure
      reap(pid)
    end
    assert_no_processes_left
  end

  it "proves YJIT on in every process of the YJIT variant's runs, and off in the plain one's" do
    out, err, status = rackbench("micro", "fibers", "--ruby", "ruby", "--ruby", "ruby --yjit", "--modes", "processes",
                                 "--workers", "2", "--messages", "20", "--batches", "1", "--results", results)
    assert status.success?, "#{err}\n#{out}"
    by_ruby = stored.to_h { |t| [t.ruby, t] }
    { "ruby" => nil, "ruby --yjit" => "yjit" }.each do |label, jit|
      identity = by_ruby.fetch(label).identity
      assert_equal [], identity["mismatches"], label
      assert_equal 3, identity["processes"].size, "#{label}: the script and its 2 forked workers"
      assert_equal [jit], identity["processes"].map { |p| p["jit"] }.uniq, "#{label}: JIT in every process"
      assert_equal %w[exec fork fork], identity["processes"].map { |p| p["event"] }, label
      assert_equal(!jit.nil?, by_ruby[label].ruby_description.include?("+YJIT"), label)
    end
    assert_match(/What ran .*\n.*ruby --yjit.*YJIT on/m, out)
  end

  it "stops a benchmark that overruns its timeout, records why, and leaves no process" do
    out, _err, status = rackbench("micro", "fibers", "--modes", "processes", "--workers", "2", "--messages", "1000",
                                  "--warmup", "100000", "--batches", "1", "--timeout", "1s", "--results", results)
    assert_equal 1, status.exitstatus
    assert_match(/FAILED: timed out after 1s/, out)
    trial = stored.fetch(0)
    assert_equal ["failed", "timed out after 1s (stopped)"], [trial.status, trial.reason]
    assert_empty micro_processes
  end

  it "runs threads and fibers on JRuby and leaves processes out, saying why" do
    skip "no JRuby at #{jruby}" unless File.executable?(jruby)

    out, err, status = rackbench("micro", "fibers", "--ruby", "jruby", "--workers", "2", "--messages", "50",
                                 "--batches", "1", "--results", results)
    assert status.success?, "#{err}\n#{out}"
    assert_match(/skipped: ruby=jruby mode=processes workers=2 \(fork is not available on jruby\)/, out)
    trials = stored
    assert_equal %w[fibers threads], trials.map { |t| t.server }.sort
    assert(trials.all? { |t| t.status == "ok" && t.ruby_description.start_with?("jruby") })

    # The script itself says so too, when asked directly (without this
    # test's Bundler, as rackbench runs it).
    json, err, status = Open3.capture3(Rackbench::Rubies::CleanEnv.clean(ENV), jruby, Rackbench::Micro::FIBERS_SCRIPT,
                                       "--mode", "processes", unsetenv_others: true)
    assert_equal 3, status.exitstatus, err
    assert_equal ["unsupported", "processes"], JSON.parse(json).values_at("status", "mode")
    assert_match(/fork is not available on jruby/, JSON.parse(json)["reason"])
  end
end
