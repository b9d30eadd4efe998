# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# Passenger beside Puma in one tiny experiment, through the command line as
# a user runs it: rack-hello and rails-hello under Passenger (2 app
# processes, a YJIT variant) pass the readiness, identity and app checks and
# are measured beside Puma's rack-hello;
# threads 2 is refused up front with its reason; and once the run is over
# nothing of it is left running (Passenger's watchdog, core and app
# processes included). One run serves every test (its trials are the cost).
#
# Passenger's agent is compiled by bin/setup --all (bin/test runs it) or by
# the first run that needs it, and cached with the bundle's gems, so this
# run only installs bundles (cached too) and boots servers. A plan made
# with an empty cache says it will compile the agent, with its estimate;
# one made with this machine's cache says nothing of it.
describe "Passenger (integration)" do
  before { require_engine! }

  RUN_TIMEOUT_S = 600

  # The one run, shared: [stdout, stderr, status, results dir].
  def self.run_once
    @run_once ||= begin
      dir = Dir.mktmpdir("rackbench-passenger")
      results = File.join(dir, "results")
      experiment = File.join(dir, "passenger.yml")
      File.write(experiment, <<~YAML)
        name: passenger-beside-puma
        seed: 5
        batches: 1
        # A variant with an option: it must reach every app process Passenger spawns;
        # the plain ruby beside it (rack-hello under Passenger only) must run without it.
        rubies: [ruby, { name: ruby-yjit, ruby: ruby, options: ["--yjit"] }]
        servers: [puma, passenger]
        apps: [rack-hello, rails-hello]
        processes: 2
        threads: [1, 2]
        # Passenger's threads 2 is refused by the plan; Puma runs beside it with rack-hello only
        # (a Rails boot less: this test's time is counted in boots).
        exclude:
          - { server: [puma], threads: [2] }
          - { server: [puma], app: [rails-hello] }
          - { ruby: [ruby], server: [puma] }
          - { ruby: [ruby], app: [rails-hello] }
        load: { connections: 2, duration: 1s, warmup: 0.3s, timeout: 5s }
      YAML
      out, err, status = rackbench("run", experiment, "--results", results)
      [out, err, status, results, dir]
    end
  end

  Minitest.after_run { FileUtils.rm_rf(run_once[4]) if @run_once }

  def out = self.class.run_once[0]
  def err = self.class.run_once[1]
  def results = self.class.run_once[3]

  def trials
    Rackbench::Store.open(results, &:trials)
  end

  def passenger_trials
    trials.select { |t| t.server == "passenger" }
  end

  it "measures rack-hello and rails-hello under Passenger beside Puma's rack-hello, every trial ok" do
    status = self.class.run_once[2]
    assert status.success?, "run failed:\n#{out}\n#{err}"
    assert_match(/4 ok, 0 failed/, out)
    stored = trials
    assert_equal [%w[ruby passenger rack-hello], %w[ruby-yjit passenger rack-hello], %w[ruby-yjit passenger rails-hello],
                  %w[ruby-yjit puma rack-hello]],
                 stored.map { |t| [t.ruby, t.server, t.app] }.sort
    assert(stored.all? { |t| t.status == "ok" }, stored.map(&:reason).compact.join("\n"))
    assert(stored.all? { |t| t.rate.positive? && t.pss_peak_bytes.to_i.positive? })
    assert(passenger_trials.all? { |t| t.gem_versions.key?("passenger") }, "passenger's version recorded")
  end

  it "reuses the agent compiled before: the run compiles nothing and its plan has no step for it" do
    assert self.class.run_once[2].success?, err
    refute_match(/Compiling Passenger|first: compile/, out)
  end

  it "plans the agent's compile, with its estimate, when the cache has none" do
    experiment = File.join(self.class.run_once[4], "passenger.yml")
    exe = File.expand_path("../../exe/rackbench", __dir__)
    Dir.mktmpdir("rackbench-passenger-empty-cache") do |cache|
      listing, err, status = Open3.capture3({ "RACKBENCH_CACHE" => cache }, RbConfig.ruby, exe, "run", experiment,
                                            "--dry-run", "--results", File.join(cache, "results"))
      assert status.success?, err
      assert_match(/^Before the first trial: compile Passenger's agent \(once for every ruby, then cached\), about \d+m \d+s \(guessed: /,
                   listing)
      assert_equal 1, listing.scan("compile Passenger").size, "one compile for both rubies"
      assert_empty Dir.children(cache) - ["results"], "a plan installs nothing"
    end
    listing, err, status = Open3.capture3(RbConfig.ruby, exe, "run", experiment, "--dry-run", "--results",
                                          File.join(self.class.run_once[4], "dry"))
    assert status.success?, err
    refute_includes listing, "Before the first trial", "this machine's cache has the agent"
  end

  it "refuses threads 2 under Passenger up front, with the reason" do
    reason = "passenger (open source) runs each app process single-threaded: threads 2 needs Passenger " \
             "Enterprise's --concurrency-model thread; use threads 1"
    skipped = out.lines.grep(/skipped: .*server=passenger .*threads=2/)
    assert_equal 3, skipped.size, out
    skipped.each { |line| assert_includes line, "(#{reason})" }
    refute(trials.any? { |t| t.server == "passenger" && t.threads == 2 })
  end

  it "identifies both app processes of each Passenger trial as the trial's ruby variant with the bundle's passenger" do
    passenger_trials.each do |trial|
      identity = trial.identity
      assert_equal "passenger", identity.dig("server_gem", "name")
      assert_equal trial.gem_versions["passenger"], identity.dig("server_gem", "version")
      assert_empty identity["mismatches"]
      processes = identity["processes"]
      parents = processes.map { |p| p["ppid"] }
      # Smart spawning: the boot process (exec'd by the guard), the
      # preloader (exec'd by Passenger's core) and the app processes it forked.
      main = processes.first
      preloader = processes.find { |p| p["event"] == "exec" && p != main }
      refute_nil preloader, "no preloader reported: #{processes.inspect}"
      app_processes = processes.select { |p| p["event"] == "fork" && !parents.include?(p["pid"]) }
      assert_equal 2, app_processes.size, "#{trial.app}: #{processes.inspect}"
      assert(app_processes.all? { |p| p["ppid"] == preloader["pid"] })
      assert_equal 4, processes.size, "#{trial.app}: boot, preloader and 2 app processes"
      # The variant's --yjit reached the preloader and the app processes through Passenger's --ruby;
      # the plain ruby's processes run without a JIT.
      assert_equal [trial.ruby == "ruby-yjit" ? "yjit" : nil], processes.map { |p| p["jit"] }.uniq, trial.ruby
      assert_equal "production", identity.dig("env", "RAILS_ENV")
    end
  end

  it "stops everything it started: no Passenger agent, app process or server of the run is left" do
    self.class.run_once
    pids = passenger_trials.flat_map { |t| t.identity["processes"].map { |p| p["pid"] } }
    refute_empty pids
    alive = pids.select { |pid| File.exist?("/proc/#{pid}") && File.read("/proc/#{pid}/cmdline").include?("ruby") }
    assert_empty alive, "app processes still running"
    agents = Dir.glob("/proc/[0-9]*/cmdline").select do |path|
      File.binread(path).include?(results)
    rescue SystemCallError
      false
    end
    assert_empty agents, "processes whose command line names the results directory (Passenger's watchdog)"
    marked = Dir.glob("/proc/[0-9]*/environ").select do |path|
      File.binread(path).include?("RACKBENCH_RESULTS_DIR=#{results}")
    rescue SystemCallError
      false
    end
    assert_empty marked, "processes of the run still alive"
    # Passenger's instance directory (its sockets, under /tmp) is removed with the watchdog.
    instance_dirs = passenger_trials.map { |t| File.read(t.log_path)[/--instance-registry-dir (\S+)/, 1] }
    assert_equal 3, instance_dirs.compact.size
    instance_dirs.each { |dir| refute File.exist?(dir), "#{dir} left behind" }
  end
end
