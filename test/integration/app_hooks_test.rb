# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# The user's app's hooks, its own logs and retried failures, end to end
# through the command line with a real server (test/fixtures/apps/hooked):
# apps[].setup runs once per Bundler environment through the launcher,
# apps[].reset before every trial, both logged; the app's log/production.log
# is kept with each trial; and a failure run again with --resume
# --retry-failed keeps the earlier attempt as history.
describe "your app's hooks, logs and retried failures (integration)" do
  before do
    require_engine!
    FileUtils.rm_rf(app_log_dir)
  end

  let(:dir) { Dir.mktmpdir("rackbench-hooks") }
  let(:state) { File.join(dir, "state").tap { |d| FileUtils.mkdir_p(d) } }
  let(:results) { File.join(dir, "results") }
  let(:app) { File.expand_path("../fixtures/apps/hooked", __dir__) }
  let(:app_log_dir) { File.join(app, "log") }
  let(:reset) { %(sh -c 'echo reset >> "$HOOKED_STATE/resets"') }

  after do
    FileUtils.rm_rf(dir)
    FileUtils.rm_rf(app_log_dir)
  end

  # An experiment file of the hooked app with +hooks+ (YAML lines of its
  # apps entry), 2 batches of one configuration.
  def experiment(name, hooks)
    File.join(dir, "#{name}.yml").tap do |path|
      File.write(path, <<~YAML)
        name: #{name}
        batches: 2
        rubies: [ruby]
        servers: [puma]
        apps:
          - name: hooked
            path: #{app}
            health: /up
            expect_body: hooked
            env: { HOOKED_STATE: #{state} }
        #{hooks.map { |line| "    #{line}" }.join("\n")}
        processes: 1
        threads: 1
        load: { connections: 1, duration: 0.3s, warmup: 0.1s, timeout: 5s }
      YAML
    end
  end

  def stored
    Rackbench::Store.open(results) { |store| store.trials.sort_by(&:position) }
  end

  def lines(name)
    path = File.join(state, name)
    File.exist?(path) ? File.readlines(path) : []
  end

  def trial_dirs
    Dir.glob(File.join(results, "work", "*")).sort
  end

  it "runs the setup once per environment and the reset before each trial, and keeps the app's log" do
    file = experiment("hooks", ["setup: bin/bench-setup", "reset: #{reset.to_json}"])
    out, err, status = rackbench("run", file, "--results", results)
    assert status.success?, "run failed: #{err}\n#{out}"
    trials = stored
    assert_equal %w[ok ok], trials.map(&:status)
    setup = lines("setup-ran")
    assert_equal 1, setup.size, "once for the environment"
    assert_match(/\Asetup RACK_ENV=production rack=\S+ ruby=ruby$/, setup.first, "the trial's env, through the bundle")
    assert_equal 2, lines("resets").size
    assert_equal [%w[reset setup], %w[reset]], trials.map { |t| t.identity["hooks"].keys.sort }
    assert(trial_dirs.all? { |d| File.read(File.join(d, "reset.log")).start_with?("# reset: sh -c") }, "logged per trial")
    setup_log = trials.first.identity["hooks"]["setup"]["log"]
    assert_equal File.join(results, "logs", "setup-hooked-ruby-puma.log"), setup_log
    assert_includes File.read(setup_log), "database prepared"
    trial_dirs.each do |trial_dir|
      kept = File.read(File.join(trial_dir, "app-logs", "production.log"))
      assert_equal 1, kept.scan("booted with RACK_ENV=production").size, "this trial's part of the app's log only"
    end
  end

  it "runs no hook for an app without them" do
    out, err, status = rackbench("run", experiment("plain", []), "--results", results)
    assert status.success?, "run failed: #{err}\n#{out}"
    assert_equal [nil, nil], stored.map { |t| t.identity["hooks"] }
    assert_empty lines("setup-ran")
    assert_empty lines("resets")
    assert_empty Dir.glob(File.join(results, "{logs/setup-*,work/*/reset.log}"))
    assert(trial_dirs.all? { |d| File.file?(File.join(d, "app-logs", "production.log")) }, "its log is kept all the same")
  end

  it "fails an environment's trials when its setup fails, and a trial whose reset fails, quoting the error" do
    setup = %(sh -c 'echo x >> "$HOOKED_STATE/setup-ran"; echo "PG::ConnectionBad: no database" >&2; exit 4')
    out, _err, status = rackbench("run", experiment("failing-setup", ["setup: #{setup.to_json}", "reset: #{reset.to_json}"]),
                                  "--results", results)
    refute status.success?
    reasons = stored.map { |t| t.reason.lines.first.chomp }
    assert_equal 2, reasons.size
    reasons.each { |r| assert_match(/\Aapp setup `sh -c .*` exited with status 4: PG::ConnectionBad: no database \(log: /, r) }
    assert_equal 1, lines("setup-ran").size, "not run again for the second trial"
    assert_empty lines("resets")
    assert_includes out, "FAILED: app setup"

    failing_reset = %(sh -c 'echo "cp: cannot stat db/bench.sqlite3.orig" >&2; exit 1')
    _out, _err, status = rackbench("run", experiment("failing-reset", ["reset: #{failing_reset.to_json}"]),
                                   "--results", File.join(dir, "results-reset"))
    refute status.success?
    trials = Rackbench::Store.open(File.join(dir, "results-reset"), &:trials)
    assert_equal 2, trials.size
    trials.each do |t|
      assert_match(/\Aapp reset `sh -c .*` exited with status 1: cp: cannot stat db\/bench.sqlite3.orig \(log: .*reset.log\)$/,
                   t.reason.lines.first)
    end
  end

  it "retries failures with --resume --retry-failed, keeping the earlier attempts, and not without it" do
    File.write(File.join(state, "fail"), "")
    file = experiment("retry", ["reset: #{reset.to_json}"])
    _out, _err, status = rackbench("run", file, "--results", results)
    refute status.success?
    first = stored
    assert_equal %w[failed failed], first.map(&:status)
    first.each do |t|
      assert_match(/app check failed: .*500.*; app log log\/production.log: RuntimeError \(the fail marker is present\):/,
                   t.reason.lines.first, "the error from the app's own log")
    end
    File.delete(File.join(state, "fail"))

    _out, err, status = rackbench("run", file, "--results", results, "--retry-failed")
    assert_equal [2, "rackbench: --retry-failed only works with --resume\n"], [status.exitstatus, err]

    out, err, status = rackbench("run", file, "--results", results, "--resume")
    assert_match(/0 to run/, out)
    assert_equal first, stored, "--resume alone skips failed trials: #{err}"

    out, err, status = rackbench("run", file, "--results", results, "--resume", "--retry-failed")
    assert status.success?, "retry failed: #{err}\n#{out}"
    assert_match(/2 failed to retry, 2 to run/, out)
    retried = stored
    assert_equal [%w[ok 2], %w[ok 2]], retried.map { |t| [t.status, t.attempt.to_s] }
    assert_equal first.map { |t| [t.key, t.batch, t.position] }, retried.map { |t| [t.key, t.batch, t.position] }

    out, err, status = rackbench("report", "--results", results)
    assert status.success?, err
    assert_includes out, "2 trials retried, 2 earlier failures kept (see rackbench report --history)"
    out, err, status = rackbench("report", "--results", results, "--json")
    assert status.success?, err
    doc = JSON.parse(out)
    assert_equal [[2, 1], [2, 1]], doc["trials"].map { |t| [t["attempt"], t["earlier_attempts"].size] }
    earlier = doc["trials"].map { |t| t["earlier_attempts"].first }
    assert(earlier.all? { |e| e["status"] == "failed" && e["reason"].include?("the fail marker is present") })
    retried.zip(earlier).each do |trial, e|
      assert_equal trial.log_path.sub(/\.log\z/, ".attempt-1.log"), e["log_path"]
      assert_includes File.read(e["log_path"]), "Puma starting", "the earlier attempt's server log is kept beside the retry's"
    end
    assert_equal 1, doc["configs"].size
    assert_equal 2, doc["configs"].first["batches"], "the statistics count the latest attempts, both ok"
    out, _err, status = rackbench("report", "--results", results, "--history")
    assert status.success?
    assert_equal 3, out.lines.size
  end
end
