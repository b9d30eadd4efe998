# frozen_string_literal: true

require "test_helper"
require "stringio"

# Micro-benchmark trials (Trial::Script) run for real: the real benchmark
# script at tiny sizes and scripts that fail, crash or hang, in fresh
# processes. Unpinned, with a canned machine description. Ctrl-C of the
# command itself is in test/integration/micro_test.rb.
describe "micro-benchmark runs (integration)" do
  # An output that raises Interrupt once it has printed +after+ progress
  # results: Ctrl-C arriving right after a trial was stored.
  class MicroInterruptingOut < StringIO
    def initialize(after)
      super()
      @after = after
    end

    def puts(*lines)
      super
      return if @after.zero?

      @after -= lines.grep(/\bok \d/).size
      raise Interrupt if @after.zero?
    end
  end

  let(:dir) { Dir.mktmpdir("micro-runner") }
  let(:out) { StringIO.new }
  let(:ruby_install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: File.realpath(RbConfig.ruby), source: :path, engine: "ruby",
                                   version: RUBY_VERSION, ruby_version: RUBY_VERSION, description: RUBY_DESCRIPTION)
  end
  # A CRuby posing as JRuby: what matters to the plan is the engine.
  let(:fake_jruby) { ruby_install.with(name: "fakejruby", engine: "jruby", path: File.realpath(RbConfig.ruby)) }
  let(:unpinned) { Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil) }

  after { FileUtils.rm_rf(dir) }

  def settings(**options)
    Rackbench::Micro::Settings.build(modes: "threads,fibers", workers: "1,2", messages: "5", batches: 2, seed: 3,
                                     rubies: ["ruby"], **options)
  end

  def runner(settings: self.settings, out: self.out, script: nil, resume: false)
    Rackbench::Runner.new(source: settings, results_dir: dir, out: out, err: out, resume: resume,
                          installs: [ruby_install, fake_jruby], layout: unpinned, environment: {},
                          collaborators: script ? { script: script } : {})
  end

  def stored
    Rackbench::Store.open(dir) { |store| store.trials }
  end

  def runs
    Rackbench::Store.open(dir, &:runs)
  end

  def fake_script(body)
    File.join(dir, "fake_bench.rb").tap { |path| File.write(path, body) }
  end

  it "runs every configuration once per batch in fresh processes and stores each as a trial" do
    summary = runner.run
    assert_equal [8, 0, 0, 0], [summary.ok, summary.failed, summary.skipped, summary.already_done]
    trials = stored
    assert_equal runner.plan.map(&:key), trials.map(&:key)
    assert(trials.all?(&:ok?), trials.map(&:reason).compact.join("\n"))
    assert_equal %w[fibers threads], trials.map(&:server).uniq.sort
    assert_equal ["micro-fibers"], trials.map(&:app).uniq
    assert(trials.all? { |t| t.rate.positive? && t.requests == 5 * t.dims["workers"] && t.failed_requests.zero? })
    assert(trials.all? { |t| t.result["replies_checked"] == t.requests })
    assert(trials.all? { |t| t.result["pid"] != Process.pid }, "each run is a process of its own")
    assert(trials.all? { |t| File.read(t.log_path).start_with?("# ") })
    experiment = Rackbench::Store.open(dir) { |store| store.latest_experiment }
    assert_equal ["micro-fibers", settings.fingerprint, 3, 2], experiment.values_at(:name, :fingerprint, :seed, :batches)
    assert_equal settings.canonical.merge("modes" => settings.modes), JSON.parse(experiment[:source_text])
    assert_equal ["finished"], runs.map { |r| r[:status] }
    assert_equal 8, out.string.scan(%r{ok \d+\.\d msg/s}).size
  end

  it "after Ctrl-C keeps what was stored and resumes with the rest" do
    assert_raises(Rackbench::Interrupted) { runner(out: MicroInterruptingOut.new(3)).run }
    assert_equal 3, stored.size
    assert_equal ["interrupted"], runs.map { |r| r[:status] }

    summary = runner(resume: true).run
    assert_equal [5, 3], [summary.ok, summary.already_done]
    assert_equal runner.plan.map(&:key).sort, stored.map(&:key).sort
    assert_equal %w[interrupted finished], runs.map { |r| r[:status] }
  end

  it "records a benchmark that fails, crashes or hangs as failed trials with the reason, and leaves nothing running" do
    script = fake_script(<<~RUBY)
      mode = ARGV[ARGV.index("--mode") + 1]
      case mode
      when "threads"
        puts '{"format":"rackbench-micro-fibers","status":"failed","reason":"Mismatch: worker 0 lied"}'
        exit 1
      when "fibers"
        warn "boom: cannot allocate"
        exit 7
      else
        sleep
      end
    RUBY
    # A generous deadline for the scripts that end on their own (a busy
    # machine may take seconds to start a ruby), a short one for the one
    # that hangs.
    summary = runner(settings: settings(modes: "threads,fibers", workers: "1", batches: 1, timeout: "120s"),
                     script: script).run
    assert_equal [0, 2], [summary.ok, summary.failed]
    summary = runner(settings: settings(modes: "processes", workers: "1", batches: 1, timeout: "0.5s"),
                     script: script).run
    assert_equal [0, 1], [summary.ok, summary.failed]
    reasons = stored.to_h { |t| [t.server, t.reason] }
    assert_equal "Mismatch: worker 0 lied", reasons["threads"]
    assert_equal "exited with status 7 without a result: boom: cannot allocate", reasons["fibers"]
    assert_equal "timed out after 0.5s (stopped)", reasons["processes"]
    assert(stored.none?(&:ok?))
    marker = "RACKBENCH_TRIAL_DIR=#{dir}"
    left = Dir.glob("/proc/[0-9]*/environ").select do |path|
      File.binread(path).include?(marker)
    rescue SystemCallError
      false
    end
    assert_empty left, "a benchmark process outlived its trial"
  end

  it "runs each benchmark with the variant's options and environment, without rackbench's Bundler" do
    script = fake_script(<<~RUBY)
      require "json"
      doc = { "format" => "rackbench-micro-fibers", "status" => "ok", "messages_per_s" => 1.0, "messages" => 1,
              "probe" => { "verbose" => $VERBOSE, "marker" => ENV["MICRO_MARKER"], "rubyopt" => ENV["RUBYOPT"],
                           "gemfile" => ENV["BUNDLE_GEMFILE"], "trial_dir" => ENV["RACKBENCH_TRIAL_DIR"] } }
      puts JSON.generate(doc)
    RUBY
    runner(settings: settings(rubies: ["ruby -W2 MICRO_MARKER=on"], modes: "fibers", workers: "1", batches: 1),
           script: script).run
    probe = stored.first.result["probe"]
    assert_equal [true, "on", nil, nil], probe.values_at("verbose", "marker", "rubyopt", "gemfile")
    assert probe["trial_dir"].start_with?(File.join(dir, "work"))
  end
end
