# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require_relative "../fixtures/fakes"

# The runner with the script kind of trial (rackbench micro) against a
# fake child process: the same plan, store and resume as HTTP trials. The
# real benchmark script runs in test/integration/micro_runs_test.rb.
describe Rackbench::Trial::Script do
  let(:dir) { Dir.mktmpdir("script-trials") }
  let(:out) { StringIO.new }
  let(:ruby_install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: File.realpath(RbConfig.ruby), source: :path, engine: "ruby",
                                   version: RUBY_VERSION, ruby_version: RUBY_VERSION, description: RUBY_DESCRIPTION,
                                   jit: ["yjit"])
  end
  # A CRuby posing as JRuby: what matters to the plan is the engine.
  let(:fake_jruby) { ruby_install.with(name: "fakejruby", engine: "jruby") }
  let(:child) do
    Fakes::Child.new do |argv|
      mode = argv[argv.index("--mode") + 1]
      workers = Integer(argv[argv.index("--workers") + 1])
      doc = { "format" => "rackbench-micro-fibers", "status" => "ok", "mode" => mode, "messages" => 5 * workers,
              "messages_per_s" => 1000.0 * workers, "measured_s" => 0.005, "setup_s" => 0.001 }
      ["warming up\n#{JSON.generate(doc)}\n", 0, false]
    end
  end

  after { FileUtils.rm_rf(dir) }

  def settings(**options)
    Rackbench::Micro::Settings.build(modes: "threads,fibers", workers: "1,2", messages: "5", batches: 2, seed: 3,
                                     rubies: ["ruby"], **options)
  end

  def runner(settings: self.settings, resume: false, child: self.child, parent_env: ENV)
    Rackbench::Runner.new(source: settings, results_dir: dir, resume: resume, out: out, err: out,
                          installs: [ruby_install, fake_jruby],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: {}, parent_env: parent_env,
                          collaborators: { child: child, probe: Fakes::Child::PROBE },
                          watchdog: Fakes::Watchdog.new)
  end

  def stored
    Rackbench::Store.open(dir, &:trials)
  end

  it "runs every configuration once per batch, in the seeded order, and stores each record" do
    run = runner
    summary = run.run
    assert_equal [8, 0, 0], [summary.ok, summary.failed, summary.skipped]
    records = stored
    assert_equal run.plan.map(&:key), records.map(&:key)
    assert(records.all? { |r| r.kind == "script" && r.rate_unit == "msg/s" && r.app == "micro-fibers" })
    assert_equal [1000.0, 2000.0], records.map(&:rate).uniq.sort
    assert_equal %w[fibers threads], records.map(&:server).uniq.sort
    assert_equal({ "benchmark" => "fibers", "mode" => records.first.server, "workers" => records.first.dims["workers"],
                   "messages_per_worker" => 5, "warmup_rounds" => 1, "work_passes" => 1, "timeout_s" => 300.0 },
                 records.first.load_settings)
    assert_equal 8, out.string.scan(%r{ok \d+\.\d msg/s, setup 1\.0ms}).size
    argv = child.runs.first[:argv]
    assert_equal [Rackbench::Trial::Kind::GUARD, Process.pid.to_s, File.realpath(RbConfig.ruby), "-r",
                  Rackbench::Trial::Identity::AGENT, Rackbench::Micro::FIBERS_SCRIPT], argv.first(6)
  end

  it "refuses to run the same settings again without resume, and with resume runs nothing twice" do
    runner.run
    error = assert_raises(Rackbench::UsageError) { runner.run }
    assert_match(/already holds 8 trials of experiment 'micro-fibers'.*--resume/, error.message)
    summary = runner(resume: true).run
    assert_equal [0, 8], [summary.ok, summary.already_done]
  end

  it "leaves forked workers out on a ruby without fork, and says so before running" do
    both = settings(rubies: %w[ruby fakejruby], modes: "processes,fibers", workers: "2", batches: 1)
    summary = runner(settings: both).run
    assert_equal [3, 1], [summary.ok, summary.skipped]
    assert_match(/skipped: ruby=fakejruby mode=processes workers=2 \(fork is not available on jruby\)/, out.string)
  end

  it "records a benchmark that fails or hangs as a failed trial with the reason, and goes on" do
    failing = Fakes::Child.new do |argv|
      if argv.include?("threads")
        ['{"format":"rackbench-micro-fibers","status":"failed","reason":"Mismatch: worker 0 lied"}' + "\n", 1, false]
      else
        ["", nil, true]
      end
    end
    summary = runner(child: failing, settings: settings(workers: "1", batches: 1, timeout: "0.5s")).run
    assert_equal [0, 2], [summary.ok, summary.failed]
    reasons = stored.to_h { |r| [r.server, r.reason] }
    assert_equal({ "threads" => "Mismatch: worker 0 lied", "fibers" => "timed out after 0.5s (stopped)" }, reasons)
    assert(stored.all? { |r| r.rate.nil? && r.requests.nil? }, "a failed run has no rate")
  end

  it "runs each benchmark with the variant's options and environment, nothing of the shell's or Bundler's" do
    runner(settings: settings(rubies: ["ruby -W2 MICRO_MARKER=on"], modes: "fibers", workers: "1", batches: 1),
           parent_env: ENV.to_h.merge("RUBYOPT" => "-rbundler/setup", "RUBY_YJIT_ENABLE" => "1")).run
    run = child.runs.first
    assert_includes run[:argv], "-W2"
    assert_equal "on", run[:env]["MICRO_MARKER"]
    assert_nil run[:env]["RUBYOPT"]
    assert_nil run[:env]["RUBY_YJIT_ENABLE"], "the shell's JIT switch stays in the shell"
    assert run[:env]["RACKBENCH_TRIAL_DIR"].start_with?(File.join(dir, "work"))
    assert_equal dir, run[:env]["RACKBENCH_RESULTS_DIR"]
    assert_equal "ruby -W2 MICRO_MARKER=on", stored.first.ruby
  end

  it "proves what each run ran, both ways: YJIT and a variable in their variant, and not in the other" do
    both = settings(rubies: ["ruby --yjit MICRO_MARKER=on", "ruby"], modes: "fibers", workers: "1", batches: 1)
    summary = runner(settings: both).run
    assert_equal [2, 0], [summary.ok, summary.failed]
    by_ruby = stored.to_h { |r| [r.ruby, r] }
    jit = by_ruby.fetch("ruby --yjit MICRO_MARKER=on")
    plain = by_ruby.fetch("ruby")
    assert_equal ["yjit", "on"], [jit.identity["jit"], jit.identity["env"]["MICRO_MARKER"]]
    assert_equal [nil, nil], [plain.identity["jit"], plain.identity["env"].fetch("MICRO_MARKER")]
    assert_equal "fake ruby #{File.basename(RbConfig.ruby)}", plain.ruby_description, "what ran, as it said"
    assert_equal [[], []], [jit.identity["mismatches"], plain.identity["mismatches"]]
  end

  it "fails a run whose process ran something other than its variant, naming the difference" do
    jit_anyway = Fakes::Child.new(ran: ->(report) { report.merge("jit" => "yjit") }, &child_output)
    summary = runner(child: jit_anyway, settings: settings(modes: "fibers", workers: "1", batches: 1)).run
    assert_equal [0, 1], [summary.ok, summary.failed]
    record = stored.first
    assert_match(/\Aidentity check failed: main process \d+: YJIT on, the variant 'ruby' does not ask for a JIT\z/,
                 record.reason)
    assert_equal "yjit", record.identity["jit"], "what ran is recorded"
    assert_equal 1, record.identity["mismatches"].size
  end

  it "fails a run whose process reported nothing, and keeps a failed run's own reason" do
    silent = Fakes::Child.new(ran: ->(_report) { nil }, &child_output)
    runner(child: silent, settings: settings(modes: "fibers", workers: "1", batches: 1)).run
    assert_match(/identity check failed: the script reported no identity/, stored.first.reason)

    FileUtils.rm_rf(dir)
    hung = Fakes::Child.new(ran: ->(_report) { nil }) { ["", nil, true] }
    runner(child: hung, settings: settings(modes: "fibers", workers: "1", batches: 1, timeout: "0.5s")).run
    assert_equal "timed out after 0.5s (stopped)", stored.first.reason
  end

  def child_output
    lambda do |argv|
      doc = { "format" => "rackbench-micro-fibers", "status" => "ok", "mode" => argv[argv.index("--mode") + 1],
              "messages" => 5, "messages_per_s" => 1000.0, "measured_s" => 0.005, "setup_s" => 0.001 }
      ["#{JSON.generate(doc)}\n", 0, false]
    end
  end
end
