# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"
require_relative "../support/real_profiles"

# Profiled trials through the runner and the HTTP kind, against fakes
# (test/fixtures/fakes/): the server of a profiled trial gets
# RACKBENCH_PROFILE (a plain one never does), its processes' dumps are
# merged into the results directory and summed up in the record, the
# record is marked profiled, and a profiler a ruby cannot run stops the
# run at check time. The fake launcher plays the server's processes: it
# writes their identity reports and dumps into the trial's directory.
# Its last test builds the profile companion's Part itself: the companions are
# loaded when Trial::Http first lists them, which another file may not have done.
Rackbench::Trial::Http::Companions.load_all

describe "profiled trials in a run" do
  let(:dir) { Dir.mktmpdir("rackbench-profiled") }
  let(:out) { StringIO.new }
  after { FileUtils.rm_rf(dir) }

  def install(engine: "ruby", version: RUBY_VERSION, name: "ruby")
    Rackbench::Rubies::Install.new(name: name, path: RbConfig.ruby, source: :path, engine: engine, version: version,
                                   ruby_version: RUBY_VERSION, description: RUBY_DESCRIPTION, jit: [])
  end

  def experiment(profile, inside: nil)
    text = <<~YAML
      name: profiled-test
      seed: 3
      batches: 2
      rubies: [ruby]
      servers: [puma]
      apps: [rack-hello]
      processes: [1, 2]
      threads: 1
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
    text += "profile: #{profile}\n" if profile
    text += "inside: #{inside}\n" if inside
    Rackbench::Experiment.parse(text, source: "test.yml", base_dir: dir)
  end

  # A launcher whose servers' two processes leave their identity reports
  # and, for a profiled trial, their dumps (unless dumps: false).
  def launcher(dumps: true)
    Fakes::Launcher.new do |keywords|
      work = keywords[:work_dir]
      pids = [Process.pid, Process.ppid] # alive, as a server's processes are
      FileUtils.mkdir_p([File.join(work, "identity"), File.join(work, "inside")])
      pids.each { |pid| File.write(File.join(work, "identity", "#{pid}.json"), "{}") }
      if dumps && keywords[:env]["RACKBENCH_PROFILE"]
        pids.each { |pid| RealProfiles.dump(File.join(work, "inside"), pid, RealProfiles.work(outer: 10, inner: 20)) }
      end
      nil
    end
  end

  def runner(exp, launcher:, installs: [install], engine: Fakes::Engine.new)
    Rackbench::Runner.new(source: exp, results_dir: dir, resume: false, retry_failed: false, fail_fast: false,
                          out: out, err: StringIO.new, installs: installs,
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          collaborators: { engine: engine, launcher: launcher, bundles: Fakes::Bundles.new,
                                           companions: Fakes.companions },
                          watchdog: Fakes::Watchdog.new)
  end

  def stored
    Rackbench::Store.open(dir, &:trials)
  end

  it "profiles one trial per configuration beside the plain ones, its workers' dumps merged into profiles/" do
    fake = launcher
    summary = runner(experiment("{ tool: stackprof, mode: object }"), launcher: fake).run
    assert_equal [6, 0], [summary.ok, summary.failed]
    profiled, plain = stored.partition { |r| Rackbench::Profile.profiled?(r) }
    assert_equal 2, profiled.size
    assert_equal 4, plain.size
    assert(profiled.all? { |r| r.key.end_with?("#profile") && r.batch == 1 })

    envs = fake.launches.to_h { |k| [k[:trial].key, k[:env]] }
    profiled.each { |r| assert_equal "stackprof:object:1", envs.fetch(r.key)["RACKBENCH_PROFILE"] }
    plain.each { |r| refute envs.fetch(r.key).to_h.key?("RACKBENCH_PROFILE"), "a plain trial runs no profiler" }

    record = profiled.first
    mark = Rackbench::Profile.of(record)
    assert_equal({ "tool" => "stackprof", "mode" => "object", "interval" => 1, "trials" => 1, "missing" => [],
                   "processes" => 2 }, mark.reject { |k, _| %w[file samples].include?(k) })
    assert_equal Rackbench::Profile::Files.relative_path(record.key), mark["file"]
    profile = Rackbench::Profile::Files.read(dir, record)
    assert_equal mark["samples"], profile.samples
    assert_operator RealProfiles.self_samples(profile, "RealProfiles::ProfileWork#inner"), :>=, 40, "both processes'"
    assert_nil Rackbench::Profile.of(plain.first)
    assert_equal 2, out.string.scan(/batch 1 \(profiled\)/).size, "the progress line says which trial is profiled"
    table = Rackbench::Store.open(dir) { |store| Rackbench::TrialReport.new(store).table }
    assert_equal 2, table.scan("ok (profiled)").size
  end

  it "opens the window channel for the profiler also when the counting agent is off" do
    fake = launcher
    runner(experiment("{ tool: stackprof, mode: object }", inside: "off"), launcher: fake).run
    envs = fake.launches.map { |k| [k[:trial].profiled?, k[:env].to_h] }
    envs.each do |profiled, env|
      if profiled
        assert_equal "1", env["RACKBENCH_WINDOW"]
        assert_equal "stackprof:object:1", env["RACKBENCH_PROFILE"]
      else
        assert_nil env["RACKBENCH_WINDOW"]
        assert_nil env["RACKBENCH_PROFILE"]
      end
      assert_nil env["RACKBENCH_INSIDE"]
    end
    assert_equal [true, false], envs.map(&:first).uniq.sort_by { |p| p ? 0 : 1 }
    assert(stored.select { |r| Rackbench::Profile.profiled?(r) }.all? { |r| r.ok? && Rackbench::Profile.of(r)["samples"].positive? })
  end

  it "fails a profiled trial whose server gave no profile, naming the processes" do
    exp = experiment("stackprof")
    collector = ->(work_dir) { Rackbench::Profile::Collector.new(work_dir, deadline_s: 0.2) }
    trial = Rackbench::Experiment::Plan.new(exp).trials.find(&:profiled?)
    outcome = { status: "ok", load_settings: { "duration_s" => 0.1 } }
    work = File.join(dir, "work")
    FileUtils.mkdir_p(File.join(work, "identity"))
    File.write(File.join(work, "identity", "#{Process.pid}.json"), "{}")
    scene = Rackbench::Trial::Http::Companion::Scene.new(trial: trial, work_dir: work)
    result = Rackbench::Trial::Http::Companions::Profile::Part.new(scene, collector, dir).document(outcome)
    assert_equal "failed", result[:status]
    assert_match(/no server process gave samples/, result[:reason])
    assert_equal [Process.pid], result[:load_settings]["profile"]["missing"].map { |m| m["pid"] }
    assert_equal 0.1, result[:load_settings]["duration_s"]
  end

  # An engine that fails every trial once it has started its window.
  class FailingEngine < Fakes::Engine
    def run(settings, env: {}, on_phase: nil)
      super
      raise Rackbench::SetupError, "load engine crashed"
    end
  end

  it "keeps a failed profiled trial marked profiled: it never counts as a failed measured trial" do
    runner(experiment("stackprof"), launcher: launcher, engine: FailingEngine.new).run
    profiled, plain = stored.partition { |r| Rackbench::Profile.profiled?(r) }
    assert_equal [2, 4], [profiled.size, plain.size]
    assert(stored.all? { |r| r.status == "failed" && r.reason == "load engine crashed" })
    assert(profiled.all? { |r| r.key.end_with?("#profile") }, profiled.map(&:key).inspect)
    assert_equal ["stackprof"], profiled.map { |r| Rackbench::Profile.of(r)["tool"] }.uniq
  end

  it "runs nothing more without the key" do
    fake = launcher
    runner(experiment(nil), launcher: fake).run
    assert_equal 4, stored.size
    assert(stored.none? { |r| Rackbench::Profile.profiled?(r) })
    refute(fake.launches.any? { |k| k[:env].to_h.key?("RACKBENCH_PROFILE") })
    refute File.exist?(File.join(dir, "profiles"))
  end

  it "refuses, before anything runs, a profiler one of the rubies cannot run" do
    jruby = install(engine: "jruby", version: "9.4.5.0", name: "ruby")
    error = assert_raises(Rackbench::ConfigError) { runner(experiment("stackprof"), launcher: launcher, installs: [jruby]).run }
    assert_equal "test.yml: profile.tool stackprof needs CRuby; ruby is jruby 9.4.5.0", error.message
    error = assert_raises(Rackbench::ConfigError) { runner(experiment("vernier"), launcher: launcher).run }
    assert_match(/\Atest\.yml: profile\.tool vernier needs Ruby >= 3\.2\.1; ruby is ruby #{Regexp.escape(RUBY_VERSION)}\z/,
                 error.message) if Gem::Version.new(RUBY_VERSION) < Gem::Version.new("3.2.1")
    refute File.exist?(File.join(dir, "results.db")), "nothing stored"
  end

  it "runs only the profiled trials for `rackbench profile` (profile_only)" do
    exp = experiment(nil).with(profile: Rackbench::Profile::Settings.new(tool: "stackprof", mode: "object"),
                               profile_only: true)
    runner(exp, launcher: launcher).run
    assert_equal 2, stored.size
    assert(stored.all? { |r| Rackbench::Profile.profiled?(r) })
    report = Rackbench::Store.open(dir) { |store| Rackbench::Report.new(store) }
    assert_empty report.configs
    assert_equal 2, report.profiles.entries.size
    assert_match(/profiled trials only, no measurement\n\nProfile of /, Rackbench::Report::Terminal.new(report).render)
  end
end
