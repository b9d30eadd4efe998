# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# Trials of an app with services, over the fakes (Trial::Http with a fake
# service launcher under the real Services::Started and Group): the
# services start once before the first trial and stop after the last, the
# server gets their variables, each boot follows a restore of the template
# (kept once), the window samples them, each trial stores their documents;
# a service that cannot start stops the run with nothing stored, one that
# dies fails its trials with the reason, a missing one is refused up front.
describe "trials of an app with services" do
  let(:dir) { Dir.mktmpdir("rackbench-services-trial") }
  let(:out) { StringIO.new }
  let(:engine) { Fakes::Engine.new }
  let(:launcher) { Fakes::Launcher.new }
  let(:services) { Fakes::ServiceLauncher.new }

  after { FileUtils.rm_rf(dir) }

  def experiment(batches: 2)
    Rackbench::Experiment.parse(<<~YAML, source: "services.yml", base_dir: dir)
      name: services-trial
      batches: #{batches}
      rubies: [ruby]
      servers: [puma]
      apps:
        - rack-hello
        - { name: cpu, services: [postgresql, { name: redis, env: CACHE_URL }] }
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
  end

  def runner(exp, services: self.services)
    collaborators = { engine: engine, launcher: launcher, bundles: Fakes::Bundles.new,
                      companions: Fakes.companions(services: { services: services }) }
    Rackbench::Runner.new(source: exp, results_dir: dir, out: out, err: StringIO.new, installs: [Fakes.install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: [0], engine_cpus: [1]),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          collaborators: collaborators, watchdog: Fakes::Watchdog.new)
  end

  def stored
    Rackbench::Store.open(dir, &:trials)
  end

  it "starts them once, restores them before every boot, samples them over the window and stores them" do
    summary = runner(experiment).run
    assert_equal [4, 0], [summary.ok, summary.failed]
    assert_equal [%w[postgresql cpu], %w[redis cpu]], services.launches.map { |l| [l[:kind].name, l[:app_name]] },
                 "one of each, for the app that names them, before the first trial"
    launch = services.launches.first
    assert_equal [0], launch[:layout].server_cpus, "pinned beside the server"
    assert_equal Rackbench::Watchdog.marker_env(dir), launch[:marker_env]
    assert_match(%r{logs/service-cpu-postgresql\.log\z}, launch[:log_path])
    services.services.each do |service|
      assert_equal %i[keep_template restore start stop restore start stop stop_process], service.events,
                   "the template kept once, restored before each of the two trials, stopped once at the end"
    end

    cpu = stored.select { |r| r.app == "cpu" }
    assert_equal 2, cpu.size
    cpu.each do |record|
      assert_equal %w[postgresql redis], record.services.map { |d| d["name"] }
      assert_equal({ "rows" => 10 }, record.services.first["state"])
      assert_in_delta 0.4, record.services.first.dig("sample", "cpu_user_s") + record.services.first.dig("sample", "cpu_system_s")
    end
    assert_nil stored.find { |r| r.app == "rack-hello" }.services

    envs = launcher.launches.to_h { |l| [l[:app].name, l[:env]] }
    assert_equal "postgresql://fake/cpu", envs["cpu"]["DATABASE_URL"]
    assert_equal "redis://fake/cpu", envs["cpu"]["CACHE_URL"], "the variable the entry names"
    assert_equal "services", envs["cpu"].sources["DATABASE_URL"]
    assert_equal "postgresql://fake/cpu", envs["cpu"].checked["DATABASE_URL"], "checked inside the server"
    assert_nil envs["rack-hello"]["DATABASE_URL"]
    assert envs["rack-hello"].checked.key?("CACHE_URL"), "the app without services proves it runs without them"
    assert_nil envs["rack-hello"].checked["CACHE_URL"]
    assert envs["rack-hello"].checked.key?("PGHOST"), "PostgreSQL's client variable too"
    assert_match(/service postgresql of cpu: PostgreSQL .* as DATABASE_URL/, out.string)
    assert_match(/server on CPU 0 \(with the services\)/, out.string)
  end

  it "stops the run before any trial when a service cannot start, stops those that did, stores nothing" do
    failing = Fakes::ServiceLauncher.new do |keywords|
      keywords[:kind].name == "redis" ? Rackbench::SetupError.new("service redis of app cpu: port 6379 is already in use on 127.0.0.1") : nil
    end
    error = assert_raises(Rackbench::SetupError) { runner(experiment, services: failing).run }
    assert_equal "service redis of app cpu: port 6379 is already in use on 127.0.0.1", error.message
    assert_equal [[:stop_process]], failing.services.map(&:events), "PostgreSQL, started first, is stopped"
    assert_equal 0, engine.calls
    assert_empty launcher.launches
    refute File.exist?(File.join(dir, "results.db")), "nothing stored"
  end

  it "fails the trial whose service died, with its reason, and the app's later trials before their boot" do
    dying = Fakes::ServiceLauncher.new(dying: ["postgresql"])
    summary = runner(experiment, services: dying).run
    assert_equal [2, 2], [summary.ok, summary.failed]
    reasons = stored.select { |r| r.app == "cpu" }.sort_by(&:position).map(&:reason)
    assert_equal "service postgresql of app cpu: postgres was killed by signal 9 (SIGKILL) during the measurement", reasons[0]
    assert_equal "service postgresql of app cpu: postgres was killed by signal 9 (SIGKILL) before the trial", reasons[1]
    assert_equal [:stop_process], dying.services.last.events.last(1), "stopped at the end all the same"
  end

  it "refuses up front, in one line and with nothing stored, a service that is not installed" do
    services.missing << "redis"
    error = assert_raises(Rackbench::ConfigError) { runner(experiment).run }
    assert_equal "app cpu: service redis needs fake, which is not installed", error.message
    assert_empty services.launches
    refute File.exist?(File.join(dir, "results.db"))
  end

  it "starts nothing for an experiment whose apps have no services" do
    exp = Rackbench::Experiment.parse(<<~YAML, source: "plain.yml", base_dir: dir)
      name: plain
      servers: [puma]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
    runner(exp).run
    assert_empty services.launches
    assert_nil stored.first.services
    refute_match(/with the services/, out.string)
  end
end
