# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# The whole runner with real servers, real Bundler environments and the real
# load engine, through the command line as a user runs it. Durations are
# short: these tests check accounting and process hygiene, not speed.
describe "rackbench run (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-run") }
  let(:results) { File.join(dir, "results") }
  let(:experiment_file) do
    File.join(dir, "matrix.yml").tap do |path|
      File.write(path, <<~YAML)
        name: integration-matrix
        seed: 11
        batches: 1
        rubies:
          - ruby
          - { name: ruby-yjit, ruby: ruby, options: ["--yjit"] }
        servers: [puma, webrick]
        apps: [rack-hello]
        processes: 1
        threads: [1, 2]
        # A count: at load 14 a YJIT WEBrick answered nothing in 0.5 s.
        load: { connections: 2, count: 200, warmup_count: 20, timeout: 5s }
      YAML
    end
  end

  after do
    FileUtils.rm_rf(dir)
  end

  # Every process started for a trial of this test: the runner marks each
  # server with RACKBENCH_TRIAL_DIR under the results directory.
  def experiment_processes
    Dir.glob("/proc/[0-9]*/environ").select do |path|
      File.binread(path).include?("RACKBENCH_TRIAL_DIR=#{results}")
    rescue SystemCallError
      false
    end.map { |path| describe_process(File.dirname(path)) }
  end

  def describe_process(proc_dir)
    state = File.read(File.join(proc_dir, "stat"))[/\) (\S)/, 1]
    "#{File.basename(proc_dir)} #{state} #{File.binread(File.join(proc_dir, "cmdline")).tr("\0", " ")}"
  rescue SystemCallError
    "#{File.basename(proc_dir)} (gone)"
  end

  # Waits for every process of the experiment to exit; fails naming those left.
  def assert_no_processes_left(timeout_s:)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
    left = experiment_processes
    until left.empty? || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.1
      left = experiment_processes
    end
    assert_empty left, "processes of the experiment still alive"
  end

  def stored
    Rackbench::Store.open(results) { |store| store.trials }
  end

  # One run of the matrix serves two tests in one (each trial boots a
  # server: the suite's time is counted in boots): the runner is killed
  # with -9 after two stored trials, --resume finishes the rest, and the
  # finished store is checked as any run's would be.
  it "runs 2 rubies x 2 servers x 2 thread counts, survives kill -9 and resumes: 8 trials, each once, all measured" do
    pid = spawn_rackbench("run", experiment_file, "--results", results)
    begin
      # As long as the runner runs (its own deadlines end it): a busy
      # machine's bundle install and boots may take minutes.
      wait_while_running(pid, timeout_s: 600 * busy_factor, message: "two stored trials") do
        File.exist?(File.join(results, "results.db")) && stored.size >= 2
      end
      Process.kill(:KILL, pid)
      Process.wait(pid)
    ensure
      begin
        Process.kill(:KILL, pid)
        Process.wait(pid)
      rescue Errno::ESRCH, Errno::ECHILD
        nil
      end
    end
    before = stored.size
    assert_operator before, :<, 8, "the runner finished before it was killed"
    # The server of the interrupted trial dies with its parent.
    assert_no_processes_left(timeout_s: 15)

    _out, err, status = rackbench("run", experiment_file, "--results", results)
    refute status.success?
    assert_match(/already holds #{before} trials.*--resume/, err)

    out, err, status = rackbench("run", experiment_file, "--results", results, "--resume")
    assert status.success?, "resume failed: #{err}\n#{out}"
    assert_match(/#{8 - before} to run/, out)
    assert_match(/#{8 - before} ok, 0 failed/, out)
    runs = Rackbench::Store.open(results, &:runs)
    assert_equal %w[interrupted finished], runs.map { |r| r[:status] }

    trials = stored
    assert_equal 8, trials.size
    assert_equal 8, trials.map { |t| t.key }.uniq.size
    assert(trials.all? { |t| t.status == "ok" }, trials.map { |t| t.reason }.compact.join("\n"))
    assert_equal %w[ruby ruby-yjit], trials.map { |t| t.ruby }.uniq.sort
    assert_equal %w[puma webrick], trials.map { |t| t.server }.uniq.sort
    assert(trials.all? { |t| t.rate.positive? && t.pss_peak_bytes.to_i.positive? })
    # What really ran, as the servers reported it: YJIT on in the YJIT variant, off in the other.
    assert_equal({ "ruby" => [false], "ruby-yjit" => [true] },
                 trials.group_by { |t| t.ruby }.transform_values { |ts| ts.map { |t| t.ruby_description.include?("+YJIT") }.uniq })
    assert(trials.all? { |t| t.gem_versions.key?(t.server) }, "gem versions recorded")

    json, _err, status = rackbench("report", "--results", results, "--json")
    assert status.success?
    doc = JSON.parse(json)
    assert_equal 8, doc["trials"].size
    keys = %w[ruby server app processes threads batch status rps latency_us rss_peak_bytes pss_peak_bytes]
    assert(doc["trials"].all? { |t| (keys - t.keys).empty? })
    assert_equal 8, doc["configs"].size
    assert_equal "baseline", doc["configs"].first["verdict"]
    assert(doc["configs"].all? { |c| c["latency_us"]["p99"].positive? })
    assert File.size?(File.join(results, "report.html")), "run writes report.html"
    assert_empty experiment_processes
  end

  it "runs JRuby (Debian's) with the Java variant of Puma end to end" do
    File.write(experiment_file, <<~YAML)
      name: integration-jruby
      rubies: [jruby]
      servers: [puma]
      apps: [rack-hello]
      processes: 1
      threads: 2
      load: { connections: 2, duration: 1s, warmup: 1s, timeout: 5s }
    YAML
    # A JVM boots Puma in seconds on an idle machine, in minutes on a busy
    # one: the boot's allowance follows what this machine gives now (Cli).
    out, err, status = rackbench("run", experiment_file, "--results", results)
    assert status.success?, "run failed: #{err}\n#{out}"
    trial = stored.fetch(0)
    assert_equal "ok", trial.status, trial.reason
    assert_match(/\Ajruby /, trial.ruby_description)
    assert trial.gem_versions.key?("puma") # on JRuby only puma's -java platform gem installs
    assert_match(/Ruby version: jruby/, File.read(trial.log_path))
    assert_operator trial.rate, :>, 0
    assert_empty experiment_processes
  end

  it "stops before any trial when an app's gems do not install, with Bundler's reason in one line" do
    app = File.join(dir, "broken-app")
    FileUtils.mkdir_p(app)
    File.write(File.join(app, "config.ru"), "run ->(_env) { [200, {}, [\"ok\"]] }\n")
    File.write(File.join(app, "Gemfile"), "source \"https://rubygems.org\"\ngem \"rackbench-no-such-gem-xyz\"\n")
    File.write(experiment_file, <<~YAML)
      name: integration-broken-gems
      rubies: [ruby]
      servers: [puma]
      apps: [{ name: broken, path: broken-app }, rack-hello]
      processes: 1
      threads: [1, 2]
      load: { connections: 2, duration: 0.3s, warmup: 0s, timeout: 5s }
    YAML
    out, err, status = rackbench("run", experiment_file, "--results", results)
    assert_equal 1, status.exitstatus
    assert_match(/\Arackbench: cannot install gems for broken \+ puma on ruby \(ruby \S+\): .*Could not find gem 'rackbench-no-such-gem-xyz'.* \(log: \S+\)\n\z/,
                 err.lines.last)
    assert_empty stored, "no trial ran, rack-hello's neither"
    refute_match(/\] 1\/4 /, out)
    assert_empty experiment_processes
  end

  it "fails one clear line for a malformed experiment file, storing nothing" do
    File.write(experiment_file, "name: x\nservers: [puma]\nrubies: [ruby]\napps: [rack-hello]\nthreds: 2\n")
    out, err, status = rackbench("run", experiment_file, "--results", results)
    assert_equal 2, status.exitstatus
    assert_equal "", out
    assert_equal 1, err.lines.size
    assert_match(/threds.*did you mean threads/, err)
    refute File.exist?(File.join(results, "results.db"))
  end

  it "names a ruby that does not exist" do
    File.write(experiment_file, File.read(experiment_file).sub("  - ruby\n", "  - ruby-9.9.9\n"))
    _out, err, status = rackbench("run", experiment_file, "--results", results)
    assert_equal 2, status.exitstatus
    assert_equal 1, err.lines.size
    assert_match(/ruby.*9\.9\.9.*not found/, err)
  end

  # Every process still marked with this test's results directory (the
  # watchdog's marker, which every process of a run carries).
  def marked_processes
    Dir.glob("/proc/[0-9]*/environ").select do |path|
      File.binread(path).split("\0").include?("RACKBENCH_RESULTS_DIR=#{results}")
    rescue SystemCallError
      false
    end.map { |path| describe_process(File.dirname(path)) }.reject { |p| p.end_with?("(gone)") || p.split[1] == "Z" }
  end

  it "leaves nothing alive after kill -9, not a TERM-ignoring server nor its helper in another process group" do
    app = File.expand_path("../fixtures/apps/stubborn", __dir__)
    File.write(experiment_file, <<~YAML)
      name: integration-stubborn
      batches: 1
      rubies: [ruby]
      servers: [puma]
      apps: [{ name: stubborn, path: #{app}, expect_body: stubborn }]
      processes: 1
      threads: 1
      load: { connections: 1, duration: 1s, warmup: 0.2s, timeout: 5s }
    YAML
    pid = spawn_rackbench("run", experiment_file, "--results", results)
    begin
      ignoring = wait_while_running(pid, timeout_s: 300 * busy_factor, interval_s: 0.1,
                                    message: "the server to ignore TERM") do
        Dir.glob(File.join(results, "work", "*", "ignoring-term")).first
      end
      helper = Integer(File.read(File.join(File.dirname(ignoring), "helper.pid")))
      assert_operator marked_processes.size, :>=, 2

      # A second run on the same directory refuses at once, naming the first.
      _out, err, status = rackbench("run", experiment_file, "--results", results, "--resume")
      assert_equal 2, status.exitstatus
      assert_match(/#{Regexp.escape(results)} is in use by another rackbench run \(pid #{pid}\)/, err)

      Process.kill(:KILL, pid)
      Process.wait(pid)
    ensure
      begin
        Process.kill(:KILL, pid)
        Process.wait(pid)
      rescue Errno::ESRCH, Errno::ECHILD
        nil
      end
    end
    # The server ignores TERM: the watchdog's grace (10 s) passes, then KILL.
    wait_until(timeout_s: 60, interval_s: 0.2, message: "every process of the run to be gone") { marked_processes.empty? }
    refute(File.exist?("/proc/#{helper}") && File.read("/proc/#{helper}/stat")[/\) (\S)/, 1] != "Z",
           "the helper in its own process group")

    out, err, status = rackbench("run", experiment_file, "--results", results, "--resume")
    assert status.success?, "resume failed: #{err}\n#{out}"
    # The killed trial, run again (it stores nothing until it ends): a
    # server that ignores TERM is stopped with KILL after the grace.
    assert_equal 1, stored.size
    assert(stored.all? { |t| t.status == "ok" }, stored.map { |t| t.reason }.compact.join("\n"))
    assert_empty marked_processes
  end
end
