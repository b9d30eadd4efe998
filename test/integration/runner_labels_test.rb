# frozen_string_literal: true

require "test_helper"
require "stringio"
require "open3"
require_relative "../fixtures/fakes"
require "rackbench/cli/run_command"

# The runner labels what it measured: the --label pairs and the git
# revision of an app given by path (a real repository in a temporary
# directory), stored with the experiment and part of its identity. So one
# results directory keeps one experiment per revision, and a run at a
# revision already measured is refused as any rerun is. The trials are the
# fakes' (test/fixtures/fakes/).
describe "Rackbench::Runner's labels" do
  let(:dir) { Dir.mktmpdir("rackbench-runner-labels") }
  let(:app_dir) { File.join(dir, "app") }
  let(:results) { File.join(dir, "results") }
  let(:out) { StringIO.new }

  before do
    FileUtils.mkdir_p(app_dir)
    git("init", "-q")
    commit("First", "config.ru" => "run ->(_) { [200, {}, ['1']] }\n")
  end

  after { FileUtils.rm_rf(dir) }

  def git(*args)
    env = { "GIT_AUTHOR_NAME" => "t", "GIT_AUTHOR_EMAIL" => "t@example.org", "GIT_COMMITTER_NAME" => "t",
            "GIT_COMMITTER_EMAIL" => "t@example.org" }
    text, status = Open3.capture2e(env, "git", "-C", app_dir, *args)
    assert status.success?, text
    text.strip
  end

  def commit(message, files)
    files.each { |name, text| File.write(File.join(app_dir, name), text) }
    git("add", "-A")
    git("commit", "-q", "-m", message)
    git("rev-parse", "HEAD")
  end

  def experiment
    Rackbench::Experiment.parse(<<~YAML, source: "test.yml", base_dir: dir)
      name: labelled
      batches: 1
      rubies: [ruby]
      servers: [puma]
      apps: [{ name: own, path: app }]
      load: { duration: 0.1s, warmup: 0s, connections: 2, timeout: 2s }
    YAML
  end

  def runner(labels: {}, resume: false, err: StringIO.new)
    collaborators = { engine: Fakes::Engine.new, launcher: Fakes::Launcher.new, bundles: Fakes::Bundles.new,
                      companions: Fakes.companions }
    Rackbench::Runner.new(source: experiment, results_dir: results, out: out, err: err,
                          installs: [Fakes.install], resume: resume,
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          collaborators: collaborators, watchdog: Fakes::Watchdog.new, labels: labels)
  end

  def experiments
    Rackbench::Store.open(results, &:experiments)
  end

  it "stores the labels and the app's revision with the experiment, its identity including them" do
    sha = git("rev-parse", "HEAD")
    r = runner(labels: { "branch" => "main" })
    r.run
    stored = experiments.last
    labels = Rackbench::Labels.from_h(stored[:labels])
    assert_equal({ "branch" => "main" }, labels.given)
    assert_equal [["app", "own", sha, "First", false]],
                 labels.revisions.map { |rev| rev.values_at("of", "name", "commit", "subject", "dirty") }
    assert_equal labels.fingerprint(experiment.fingerprint), stored[:fingerprint]
    refute_equal experiment.fingerprint, stored[:fingerprint]
    assert_match(/labels: branch=main; app own #{sha[0, 10]}/, out.string, "the run says what it measures")
  end

  it "keeps one experiment per revision in one results directory, and refuses a revision measured already" do
    runner.run
    error = assert_raises(Rackbench::UsageError) { runner.run }
    assert_match(/already holds 1 trials of experiment 'labelled' \(app own \h{10}\): add --resume .*--label KEY=VALUE/,
                 error.message)
    runner(labels: { "run" => "2" }).run
    second = commit("Burn", "config.ru" => "run ->(_) { [200, {}, ['2']] }\n")
    runner.run
    File.write(File.join(app_dir, "config.ru"), "run ->(_) { [200, {}, ['3']] }\n")
    runner.run
    revisions = experiments.map { |e| Rackbench::Labels.from_h(e[:labels]) }
    assert_equal 4, revisions.size
    assert_equal [second, true], revisions.last.revision("app", "own").values_at("commit", "dirty")
    assert_equal 4, experiments.map { |e| e[:fingerprint] }.uniq.size
    Rackbench::Store.open(results) { |store| assert_equal [1, 1, 1, 1], experiments.map { |e| store.trials(e[:id]).size } }
  end

  it "shows the labels in every report view" do
    runner(labels: { "branch" => "main" }).run
    sha = git("rev-parse", "HEAD")
    Rackbench::Store.open(results) do |store|
      report = Rackbench::Report.new(store)
      assert report.terminal_table.start_with?("Labels: branch=main; app own #{sha[0, 10]}\n"), "above the table"
      assert_equal({ "branch" => "main" }, report.to_h.dig("experiment", "labels", "given"))
      assert_includes Rackbench::HtmlReport.new(report.to_h).render, "<dt>labels</dt><dd>branch=main; app own #{sha[0, 10]}</dd>"
    end
  end

  it "resumes with the same labels, and refuses a label that is not KEY=VALUE in one line" do
    command = Rackbench::CLI::RunCommand.new(out: StringIO.new, err: StringIO.new)
    assert_equal %w[rackbench run e.yml --resume --results r --label branch=main --label pr=7],
                 command.send(:resume_command, ["e.yml"], { results: "r", labels: %w[branch=main pr=7] })
    file = File.join(dir, "e.yml")
    File.write(file, "name: e\nservers: [puma]\napps: [rack-hello]\n")
    err = StringIO.new
    code = Rackbench::CLI.run(["run", file, "--dry-run", "--label", "branch"], out: StringIO.new, err: err)
    assert_equal [Rackbench::CLI::EXIT_USAGE, "rackbench: --label takes KEY=VALUE (KEY of letters, digits, '_', '.', '-'), got 'branch'\n"],
                 [code, err.string]
  end

  it "resumes the experiment of the same revision and labels, and says when it starts another" do
    runner(labels: { "pr" => "7" }).run
    summary = runner(labels: { "pr" => "7" }, resume: true).run
    assert_equal [0, 1], [summary.ok, summary.already_done]
    assert_equal 1, experiments.size
    first = git("rev-parse", "HEAD")
    second = commit("Burn", "config.ru" => "run ->(_) { [200, {}, ['2']] }\n")
    err = StringIO.new
    assert_equal 1, runner(labels: { "pr" => "7" }, resume: true, err: err).run.ok
    assert_equal "rackbench: nothing of 'labelled' is stored with these labels and revisions (pr=7; app own " \
                 "#{second[0, 10]}); the latest stored run has pr=7; app own #{first[0, 10]}: starting a new run\n",
                 err.string
  end
end
