# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# The runner and the HTTP kind of trial orchestrating fakes (test/fixtures/
# fakes/): the plan, the store, resume, failures, what is recorded. No
# server, load engine or child process runs here; the real ones are tested
# in test/integration/.
describe Rackbench::Runner do
  let(:dir) { Dir.mktmpdir("rackbench-runner") }
  let(:out) { StringIO.new }
  let(:install) { Fakes.install }
  let(:engine) { Fakes::Engine.new }
  let(:launcher) { Fakes::Launcher.new }
  let(:samplers) { [] }
  let(:watchdog) { Fakes::Watchdog.new }
  let(:err) { StringIO.new }

  after { FileUtils.rm_rf(dir) }

  def experiment(text = nil, **replace)
    text ||= <<~YAML
      name: runner-test
      seed: 3
      batches: 2
      rubies: [ruby]
      servers: [puma, webrick]
      apps: [rack-hello]
      processes: [1, 2]
      threads: 1
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
    replace.each { |key, value| text = text.sub(/^#{key}: .*$/, "#{key}: #{value}") }
    Rackbench::Experiment.parse(text, source: "test.yml", base_dir: dir)
  end

  def runner(exp = experiment, resume: false, retry_failed: false, fail_fast: false,
             parent_env: { "PATH" => "/usr/bin:/bin" }, inside: nil, **collaborators)
    sampler = lambda do |_server|
      Fakes::Sampler.new.tap { |s| samplers << s }
    end
    companions = Fakes.companions(sampler: sampler, **(inside ? { inside: { collection: inside } } : {}))
    defaults = { engine: engine, launcher: launcher, bundles: Fakes::Bundles.new, companions: companions }
    Rackbench::Runner.new(source: exp, results_dir: dir, resume: resume, retry_failed: retry_failed,
                          fail_fast: fail_fast, out: out,
                          err: err, installs: [install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: parent_env,
                          collaborators: defaults.merge(collaborators), watchdog: watchdog)
  end

  def stored
    Rackbench::Store.open(dir, &:trials)
  end

  it "runs every supported trial once, stores each record as the kind built it, and says what it skipped" do
    summary = runner.run
    assert_equal [6, 0, 1], [summary.ok, summary.failed, summary.skipped] # webrick with 2 processes: skipped
    records = stored
    assert_equal 6, records.map(&:key).uniq.size
    assert(records.all? { |r| r.ok? && r.kind == "http" && r.rate == 200.0 && r.boot_s == 0.01 })
    assert_match(/skipped: .*server=webrick.*processes=2 .*webrick runs a single process/, out.string)
    assert_equal({ "fake" => "1.0" }, records.first.gem_versions)
    assert_equal 6, launcher.servers.sum(&:stops), "every server stopped"
    assert_equal [dir, 0], watchdog.swept, "what an earlier run left is swept first"
    assert_equal [dir, 0], watchdog.started
  end

  it "says nothing of its watchdog's last sweep when every stop left nothing" do
    runner.run
    refute_match(/still running/, err.string)
  end

  describe "when its watchdog stops processes at the run's end" do
    let(:watchdog) { Fakes::Watchdog.new(left: { termed: 2, killed: 1, survivors: 0 }) }

    it "says how many a stop missed, in one line" do
      runner.run
      assert_equal ["rackbench: warning: 3 process(es) of the run were still running after its last stop, stopped " \
                    "by its watchdog (1 with KILL)\n"], err.string.lines.grep(/still running/)
    end
  end

  it "keeps every figure in the document that measured it, and reads it back the same" do
    runner.run
    record = stored.first
    assert_equal Fakes::ENGINE_RESULT["requests"], record.requests
    assert_equal Fakes::ENGINE_RESULT["latency_us"], record.latency_us
    assert_equal [40_000_000, 30_000_000, 1.5], [record.rss_peak_bytes, record.pss_peak_bytes, record.cpu_user_s]
    assert_equal 0, record.failed_requests
    assert_equal 0.0, record.error_rate
    assert_equal 2.0, record.measure_s
    assert(samplers.all? { |s| s.started && s.stopped }, "sampled over the engine's window")
    assert_equal false, record.machine["busy"]
    columns = Rackbench::Store.open(dir) { |store| store.db[:trials].columns }
    refute_includes columns, :rps, "no figure is stored twice"
    refute_includes columns, :latency_us
  end

  it "marks the engine's window in each trial's directory, for the server's processes to watch" do
    runner.run
    env = launcher.launches.first.fetch(:env)
    assert_equal "1", env["RACKBENCH_WINDOW"], "the launcher loads the window channel"
    assert_equal "counting", env["RACKBENCH_INSIDE"], "and the counting agent, by default"
    marks = launcher.launches.map { |launch| File.join(launch.fetch(:work_dir), "inside") }.uniq
    assert_equal 6, marks.size
    marks.each do |inside|
      start_s, end_s = %w[window.start window.end].map { |name| Float(File.read(File.join(inside, name))) }
      assert_operator start_s, :<=, end_s, "the runner's clock, start before end"
    end
  end

  it "stores the counts of the server's processes, collected after the window, with the engine's window" do
    collections = []
    counts = { "pid" => 42, "ppid" => 1, "role" => "single", "started_at_s" => 1.0, "ended_at_s" => 3.0,
               "duration_s" => 2.0, "allocated_objects" => 8000, "ignored" => 1 }
    inside = lambda do |**keywords|
      collections << keywords
      Struct.new(:collect).new([[counts], [{ "pid" => 43, "reason" => "no identity report" }]])
    end
    runner(inside: inside).run
    record = stored.first
    assert_equal({ "agent" => "counting",
                   "window" => { "requests" => Fakes::ENGINE_RESULT["requests"], "duration_s" => 2.0 },
                   "processes" => [counts.except("ignored")], "missing" => [{ "pid" => 43, "reason" => "no identity report" }] },
                 record.inside)
    assert_equal 6, collections.size
    assert(collections.all? { |k| k[:identity] && File.directory?(File.join(k[:trial_dir], "inside")) })
  end

  it "loads no agent and stores no inside document with inside: off" do
    collections = []
    runner(experiment("#{experiment.source_text}inside: off\n"), inside: ->(**k) { collections << k }).run
    assert(stored.all? { |record| record.ok? && record.inside.nil? })
    env = launcher.launches.first.fetch(:env)
    assert_nil env["RACKBENCH_INSIDE"]
    assert_nil env["RACKBENCH_WINDOW"], "no watcher thread either"
    assert_empty collections
  end

  it "runs batch by batch in the seeded order, the request mix seeded per batch" do
    runner.run
    assert_equal [1, 1, 1, 2, 2, 2], stored.sort_by(&:position).map(&:batch)
    assert_equal [4, 4, 4, 5, 5, 5], engine.settings.map(&:seed)
    first_order = stored.sort_by(&:position).map(&:key)
    FileUtils.rm_rf(Dir.glob(File.join(dir, "*")))
    runner.run
    assert_equal first_order, stored.sort_by(&:position).map(&:key), "the same seed, the same order"
  end

  it "resumes after an interruption without redoing or duplicating a trial" do
    interrupted = Fakes::Engine.new(interrupt_at: 3)
    assert_raises(Rackbench::Interrupted) { runner(engine: interrupted).run }
    assert_equal 2, stored.size
    assert_equal 3, launcher.servers.sum(&:stops), "the interrupted trial's server was stopped too"
    error = assert_raises(Rackbench::UsageError) { runner.run }
    assert_match(/already holds 2 trials.*--resume/, error.message)

    assert_match(/6 to run \(about \S+, guessed: warmup \+ duration \+ ~3s per trial\)/, out.string,
                 "nothing measured yet: the plan's guess, said to be one")
    fresh = Fakes::Engine.new
    out.truncate(0)
    out.rewind
    summary = runner(resume: true, engine: fresh).run
    assert_equal [4, 2], [fresh.calls, summary.already_done]
    header = out.string.lines.first
    assert_match(/4 to run \(about /, header)
    refute_includes header, "guessed: warmup", "the stored trials' boots and stops seed the estimate"
    assert_equal 6, stored.map(&:key).uniq.size
    statuses = Rackbench::Store.open(dir) { |store| store.runs.map { |r| r[:status] } }
    assert_equal %w[interrupted finished], statuses
  end

  describe "--retry-failed" do
    # The first run: the trials at plan positions 2 and 5 fail, writing a log.
    def first_run_failing(positions)
      failing = Fakes::Launcher.new do |keywords|
        next unless positions.include?(keywords[:trial].index)

        File.write(keywords[:log_path], "attempt one's log\n")
        File.write(File.join(keywords[:work_dir], "reset.log"), "attempt one's reset\n")
        Rackbench::SetupError.new("server exited with status 1 before it was ready: flaky")
      end
      summary = runner(launcher: failing).run
      assert_equal [6 - positions.size, positions.size], [summary.ok, summary.failed]
      stored.reject(&:ok?)
    end

    it "runs the stored failures again in plan order, keeping each failure and its log as history" do
      failed = first_run_failing([2, 5])
      summary = runner(resume: true, retry_failed: true).run
      assert_equal [2, 0, 4], [summary.ok, summary.failed, summary.already_done]
      assert_equal [2, 5], launcher.launches.map { |k| k[:trial].index }, "only the failures, in plan order"
      assert_includes out.string, "4 already stored, 2 failed to retry, 2 to run"

      latest = stored.to_h { |r| [r.key, r] }
      assert_equal 6, latest.size
      assert(latest.values.all?(&:ok?), "the latest attempt of every trial is ok")
      failed.each do |earlier|
        retried = latest.fetch(earlier.key)
        assert_equal [2, earlier.batch, earlier.position], [retried.attempt, retried.batch, retried.position]
      end
      history = Rackbench::Store.open(dir) { |store| store.earlier_attempts(summary.experiment_id) }
      assert_equal failed.map(&:key).sort, history.map(&:key).sort
      history.each do |h|
        assert_equal [1, "failed"], [h.attempt, h.status]
        assert_match(/flaky/, h.reason)
        assert_equal h.log_path, "#{latest[h.key].log_path.delete_suffix(".log")}.attempt-1.log"
        assert_equal "attempt one's log\n", File.read(h.log_path)
        slug = File.basename(latest[h.key].log_path, ".log")
        assert_equal "attempt one's reset\n", File.read(File.join(dir, "work", "#{slug}.attempt-1", "reset.log")),
                     "the failure's trial directory is kept too"
      end
    end

    it "keeps the failure's own log when a retry of it was interrupted" do
      failed = first_run_failing([2])
      interrupted = Fakes::Launcher.new do |keywords|
        File.write(keywords[:log_path], "the interrupted retry's log\n")
        Interrupt.new
      end
      assert_raises(Rackbench::Interrupted) { runner(resume: true, retry_failed: true, launcher: interrupted).run }
      assert_equal failed, stored.reject(&:ok?), "the failure is still the stored attempt"
      summary = runner(resume: true, retry_failed: true).run
      history = Rackbench::Store.open(dir) { |store| store.earlier_attempts(summary.experiment_id) }
      assert_equal ["attempt one's log\n"], history.map { |h| File.read(h.log_path) }
    end

    it "is not what --resume alone does: stored failures are skipped" do
      first_run_failing([2, 5])
      summary = runner(resume: true).run
      assert_equal [0, 0, 6], [summary.ok, summary.failed, summary.already_done]
      assert_empty launcher.launches
      assert_equal 2, stored.count { |r| !r.ok? }
      assert_empty(Rackbench::Store.open(dir) { |store| store.earlier_attempts(summary.experiment_id) })
    end

    it "keeps a failure that fails again as history, and can retry once more" do
      first_run_failing([3])
      again = Fakes::Launcher.new { |_| Rackbench::SetupError.new("still broken") }
      assert_equal [0, 1], runner(resume: true, retry_failed: true, launcher: again).run.to_h.values_at(:ok, :failed)
      summary = runner(resume: true, retry_failed: true).run
      assert_equal 1, summary.ok
      history = Rackbench::Store.open(dir) { |store| store.earlier_attempts(summary.experiment_id) }
      assert_equal [[1, "flaky"], [2, "still broken"]], history.map { |h| [h.attempt, h.reason[/flaky|still broken/]] }
      assert_equal [3], stored.reject { |r| r.attempt == 1 }.map(&:attempt)
    end

    it "needs --resume" do
      error = assert_raises(Rackbench::UsageError) { runner(retry_failed: true) }
      assert_equal "--retry-failed only works with --resume", error.message
    end
  end

  it "records a server that never starts as a failed trial with its reason, and goes on" do
    failing = Fakes::Launcher.new { |_| Rackbench::SetupError.new("server exited with status 3 before it was ready: boom") }
    summary = runner(launcher: failing).run
    assert_equal [0, 6], [summary.ok, summary.failed]
    assert(stored.all? { |r| r.reason == "server exited with status 3 before it was ready: boom" && r.log_path })
    assert(stored.all? { |r| r.gem_versions == { "fake" => "1.0" } }, "what was known before the failure is kept")
    assert_equal 0, engine.calls
  end

  it "stores what a server ran when it is not what its label names" do
    record = { "description" => "ruby 3.1.7p261", "jit" => nil, "mismatches" => ["main process 1: ..."] }
    mismatch = Fakes::Launcher.new do |_|
      Rackbench::IdentityMismatch.new("identity check failed: main process 1: ran ruby 3.1.7p261, the variant " \
                                      "'ruby' is ruby 3.1.2p20", record: record)
    end
    runner(launcher: mismatch).run
    assert(stored.all? { |r| !r.ok? && r.reason.start_with?("identity check failed: main process 1: ran ruby 3.1.7p261") })
    assert_equal [record], stored.map(&:identity).uniq
  end

  it "stores what ran with every trial, and every variable the experiment's variants set, checked or unset" do
    exp = experiment(rubies: "[ruby, { name: ruby-x, ruby: ruby, env: { X: \"1\" } }]")
    runner(exp).run
    records = stored
    assert(records.all? { |r| r.ruby_description == r.identity["description"] })
    by_ruby = records.group_by(&:ruby).transform_values { |rs| rs.map { |r| r.identity["env"]["X"] }.uniq }
    assert_equal({ "ruby" => [nil], "ruby-x" => ["1"] }, by_ruby)
    env = launcher.launches.first.fetch(:env)
    assert env.checked.key?("X"), "X is checked in every trial, set or not"
    assert_equal "production", env["RAILS_ENV"]
    assert_equal File.join(dir, "work", File.basename(env["RACKBENCH_TRIAL_DIR"])), env["RACKBENCH_TRIAL_DIR"]
    assert_equal dir, env["RACKBENCH_RESULTS_DIR"], "the watchdog's marker"
    assert_equal [{ "RACKBENCH_RESULTS_DIR" => dir }], engine.envs.uniq, "the engine carries it too"
    assert_equal Rackbench::Trial::Kind::GUARD, launcher.launches.first.fetch(:guard).first
  end

  it "stops at the first failure with --fail-fast" do
    failing = Fakes::Launcher.new { |_| Rackbench::SetupError.new("app check failed: body lacks \"Hello\"") }
    error = assert_raises(Rackbench::Error) { runner(launcher: failing, fail_fast: true).run }
    assert_match(/--fail-fast.*body lacks/, error.message)
    assert_equal 1, stored.size
  end

  it "fails a trial whose error rate is too high, keeping its measurement" do
    result = JSON.parse(JSON.generate(Fakes::ENGINE_RESULT))
    result["errors"]["timeout"] = 40
    runner(engine: Fakes::Engine.new(result: result)).run
    assert(stored.all? { |r| !r.ok? && r.reason.match?(/error rate 9.09% above 1.00%/) })
    # A timeout-caused failure says what to change.
    assert_match(/40 requests got no response within the 2.0s timeout at 2 connections: raise load.timeout or lower load.connections/,
                 stored.first.reason)
    assert_equal 400, stored.first.requests
    assert_equal 40, stored.first.failed_requests
  end

  it "names the signal of a server that died during the measurement" do
    dying = Class.new(Fakes::Engine) do
      attr_accessor :launcher

      def run(settings, **options)
        launcher.servers.last.alive = false
        super
      end
    end.new
    dying.launcher = launcher
    runner(engine: dying).run
    assert(stored.all? { |r| r.reason.start_with?("server was killed by signal 9 (SIGKILL) during the measurement") })
  end

  it "refuses to start when a variable named in pass_env is not set, before storing anything" do
    exp = experiment(experiment.source_text + "pass_env: [DATABASE_URL]\n")
    error = assert_raises(Rackbench::ConfigError) { runner(exp).run }
    assert_equal "pass_env names DATABASE_URL, not set in this shell: export it or remove it from pass_env",
                 error.message
    refute File.exist?(File.join(dir, "results.db"))
    runner(exp, parent_env: { "DATABASE_URL" => "postgres://x" }).run
    assert_equal "postgres://x", launcher.launches.first.fetch(:env)["DATABASE_URL"]
  end

  describe "with built-in apps" do
    def apps_experiment(apps, load: "{ duration: 0.1s, warmup: 0s, connections: 2, timeout: 2s }")
      experiment("name: apps\nrubies: [ruby]\nservers: [puma]\napps: [#{apps}]\nload: #{load}\n")
    end

    it "fails a trial with more than 1% of responses 500, unless the app allows more" do
      result = JSON.parse(JSON.generate(Fakes::ENGINE_RESULT))
      result["status"] = { "200" => 380, "500" => 20 }
      runner(apps_experiment("rack-hello, errors"), engine: Fakes::Engine.new(result: result)).run
      by_app = stored.to_h { |r| [r.app, r] }
      assert_equal 'error rate 5.00% above 1.00% ({"500"=>20})', by_app["rack-hello"].reason
      assert by_app["errors"].ok?, by_app["errors"].reason
    end

    it "leaves an app out of the plan on a ruby engine it does not support, with the reason" do
      jruby = Rackbench::Rubies::Install.new(name: "jruby", path: RbConfig.ruby, source: :path, engine: "jruby",
                                             version: "9.3.9.0", ruby_version: "2.6.8", description: "jruby", jit: [])
      exp = experiment("name: apps\nrubies: [jruby]\nservers: [puma]\napps: [rails-posts]\n")
      run = Rackbench::Runner.new(source: exp, results_dir: dir, out: out, err: StringIO.new, installs: [jruby],
                                  layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                                  environment: {}, collaborators: { engine: engine, launcher: launcher },
                                  watchdog: Fakes::Watchdog.new)
      assert_equal ["app rails-posts runs on ruby only (not jruby)"], run.plan.skipped.map(&:reason)
      assert_empty run.plan.trials
    end

    it "loads a variant with its request list and a cookie jar per connection, a session probe added" do
      runner(apps_experiment("mix, rails-posts")).run
      by_file = engine.settings.group_by(&:requests_file)
      app = Rackbench::Apps.builtin("mix")
      # The trial's copy in its directory: the app's list, then the probe
      # every slot sends at the window's edges (its expect_session_body).
      copy = by_file.keys.compact.find { |path| File.basename(path) == Rackbench::RequestList::FILE_NAME }
      assert copy, by_file.keys.inspect
      assert by_file.fetch(copy).first.cookies
      text = File.read(copy)
      assert text.start_with?(File.read(app.requests))
      assert text.end_with?("--- probe name=session-probe\n@expect status=2xx\n" \
                            "@expect body=#{app.expect_session_body}\nGET #{app.load_path}\n"), text
      refute by_file.fetch(nil).first.cookies
    end

    it "keeps cookies for a request list from the experiment file, unless load.cookies says false" do
      list = File.join(dir, "session.requests")
      File.write(list, "--- first name=login\nPOST /login\n\nuser=a\n--- name=home\nGET /\n")
      base = "duration: 0.1s, warmup: 0s, connections: 2, timeout: 2s"
      [["requests: session.requests", [list, true]], ["requests: session.requests, cookies: false", [list, false]],
       ["cookies: true", [nil, true]]].each do |load, expected|
        FileUtils.rm_rf(Dir.glob(File.join(dir, "*.db*")))
        engine.settings.clear
        runner(apps_experiment("rack-hello", load: "{ #{base}, #{load} }")).run
        assert_equal [expected], engine.settings.map { |s| [s.requests_file, s.cookies] }, load
      end
    end
  end

  describe "load that fits the app" do
    # The canned result's slowest response is 5038.46 us: 10x is 50 ms, so
    # the calibrated timeout is the 2 s floor; a slower canned result
    # shows the rule (10x the slowest response).
    let(:slow_result) do
      JSON.parse(JSON.generate(Fakes::ENGINE_RESULT)).tap { |r| r["latency_us"]["max"] = 812_345.0 }
    end
    let(:engine) { Fakes::Engine.new(result: slow_result) }

    def untimed(batches: 2)
      experiment(nil, batches: batches, load: "{ duration: 0.1s, warmup: 0s, connections: 4 }", servers: "[puma]")
    end

    it "calibrates each configuration once, before its first trial, and every batch uses its timeout" do
      runner(untimed).run
      calibrations, trials = engine.settings.partition { |s| s.timeout_s == 120.0 }
      assert_equal 2, calibrations.size, "one calibration per configuration (processes 1 and 2)"
      assert(calibrations.all? { |s| s.rate.nil? && s.connections == 4 }, "closed loop, the trial's connections")
      assert_equal [8.2] * 4, trials.map(&:timeout_s), "10 x 812.345 ms, rounded up to 0.1 s"
      assert_equal engine.settings.first.timeout_s, 120.0, "the calibration comes before the trial"
      record = stored.first
      assert_equal 8.2, record.load_settings["timeout_s"]
      assert_equal 812_345.0, record.load_settings.dig("calibration", "latency_max_us")
      assert_match(/ok 200.0 req\/s, p99 854.0us, timeout 8.2s calibrated/, out.string)
      # Each calibration on a server of its own, so that every batch
      # measures the same thing: 4 trials + 2 calibration boots, all stopped.
      assert_equal 6, launcher.servers.size
      assert_equal 6, launcher.servers.sum(&:stops)
    end

    it "names a server that died during the calibration, not the load" do
      dying = Class.new(Fakes::Engine) do
        attr_accessor :launcher

        def run(settings, **options)
          return super unless settings.timeout_s == 120.0

          launcher.servers.last.alive = false
          super.tap { |r| r.data["requests"] = 0 }
        end
      end.new(result: slow_result)
      dying.launcher = launcher
      runner(untimed(batches: 1), engine: dying).run
      assert(stored.all? { |r| r.reason.match?(/killed by signal 9 \(SIGKILL\) during the calibration/) },
             stored.map(&:reason).inspect)
    end

    it "keeps the calibration for a resumed run" do
      interrupted = Fakes::Engine.new(result: slow_result, interrupt_at: 3) # calibrate, trial, calibrate
      assert_raises(Rackbench::Interrupted) { runner(untimed, engine: interrupted).run }
      runner(untimed, resume: true).run
      assert_equal 1, engine.settings.count { |s| s.timeout_s == 120.0 },
                   "only the configuration never calibrated before is calibrated"
      assert(stored.all? { |r| r.load_settings["timeout_s"] == 8.2 })
    end

    it "calibrates again for another experiment in the same results directory" do
      runner(untimed).run
      engine.settings.clear
      more = experiment(nil, batches: 1, load: "{ duration: 0.1s, warmup: 0s, connections: 6 }", servers: "[puma]")
      runner(more).run
      calibrations = engine.settings.select { |s| s.timeout_s == 120.0 }
      assert_equal [6, 6], calibrations.map(&:connections), "the same dimensions, another load: measured anew"
    end

    it "does not calibrate a timeout the experiment sets" do
      runner(experiment(nil, load: "{ duration: 0.1s, warmup: 0s, connections: 4, timeout: 3s }")).run
      assert(engine.settings.all? { |s| s.timeout_s == 3.0 })
      assert(stored.all? { |r| r.load_settings["calibration"].nil? })
      refute_match(/calibrated/, out.string)
      assert_match(/ok 200.0 req\/s, p99 854.0us \(/, out.string)
    end

    it "fails the trial with what to change when the app is too slow to calibrate" do
      lost = JSON.parse(JSON.generate(slow_result)).tap { |r| r["errors"]["timeout"] = 3 }
      runner(untimed(batches: 1), engine: Fakes::Engine.new(result: lost)).run
      assert(stored.all? { |r| !r.ok? && r.reason.match?(/calibration: 3 responses took over 120 s at 4 connections; lower load.connections/) })
    end
  end

  describe "check (the first-run doctor)" do
    let(:sweep) do
      experiment(nil, servers: "[puma, webrick]", processes: "[1, 2]", threads: "[1, 4]",
                      load: "{ duration: 0.1s, warmup: 0s, connections: 4 }")
    end

    it "examines one configuration per ruby, server and app: the one with the most server threads" do
      examined = runner(sweep).examined_trials.map { |t| t.config.dims.values_at("server", "processes", "threads") }
      # webrick runs one process (processes 2 is skipped); puma's largest is 2 x 4.
      assert_equal [["puma", 2, 4], ["webrick", 1, 4]], examined.sort
    end

    it "installs, boots, checks and calibrates as a first trial would, and stores nothing" do
      seen = []
      examinations = runner(sweep).examine { |e| seen << e }
      assert_equal examinations, seen
      assert(examinations.all?(&:ok?))
      puma = examinations.find { |e| e.config.dims["server"] == "puma" }
      assert_equal [0.01, 0.0, "calibration"], [puma.boot_s, puma.stop_s, puma.timeout_source]
      assert_equal 2.0, puma.load.timeout_s, "10 x 5 ms is below the 2 s floor"
      assert_equal 5038.46, puma.calibration.latency_max_us
      assert_equal "puma", puma.identity.dig("server_gem", "name")
      assert_equal 2, engine.calls, "one calibration each, no measurement"
      assert_equal 2, launcher.servers.sum(&:stops), "every server stopped"
      assert_empty stored
      assert_equal({ "server" => "puma", "processes" => 2, "threads" => 4 },
                   puma.to_h["config"].slice("server", "processes", "threads"))
    end

    it "keeps an explicit timeout and says where it came from" do
      timed = experiment(nil, servers: "[puma]", load: "{ duration: 0.1s, warmup: 0s, connections: 4, timeout: 3s }")
      examination = runner(timed).examine.first
      assert_equal [3.0, "experiment"], [examination.load.timeout_s, examination.timeout_source]
      refute_nil examination.calibration, "calibrated anyway, to compare with what the app needs"
    end

    it "reports a configuration that cannot boot, with the reason, and goes on" do
      failing = Fakes::Launcher.new do |keywords|
        Rackbench::SetupError.new("app check failed: body lacks \"Hello\"") if keywords[:adapter].name == "webrick"
      end
      examinations = runner(sweep, launcher: failing).examine
      bad, good = examinations.partition { |e| e.config.dims["server"] == "webrick" }
      assert_equal ["failed"], bad.map(&:status)
      assert_match(/body lacks/, bad.first.reason)
      assert_nil bad.first.boot_s
      assert(good.all?(&:ok?))
    end
  end
end
