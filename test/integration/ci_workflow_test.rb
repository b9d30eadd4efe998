# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"
require "shellwords"
require_relative "../support/workflow_runner"

# The example GitHub Actions workflow (doc/examples/ci/rackbench.yml) run
# step by step on this machine (test/support/workflow_runner.rb; GitHub is
# never reached: `gh` is a fake that keeps what it was asked to post), on
# an app in a git repository of its own: rack-hello, whose commit "Burn"
# sets its known slowdown (RACK_HELLO_BURN_US, doc/apps.md) in config.ru,
# so the revision is what slows it. Real runs, 5 batches of 1 s each:
#
# 1. a push to main at the first commit: its run is stored as main's,
#    labelled with the revision, and the history step draws it;
# 2. a pull request that only edits the README: A/A, the gate passes (0)
#    and the summary is posted;
# 3. a pull request adding "Burn": the gate fails with 3, and the posted
#    summary names the configuration, the ratio and the revision;
# 4. the history over main's run and the pull request's marks the burning
#    run as the change point and names its revision;
# 5. a run of 2 batches cannot be judged: the gate exits 4 and says why.
#
# CPU per request and requests/s are gated at 25%: the runs are minutes
# apart on a machine shared with other suites, and the burn costs far more
# (200 µs on a request of about 60 µs of CPU). About 17 trials, 70-90 s.
describe "the example CI workflow (integration)" do
  before { require_engine! }

  ROOT = File.expand_path("../..", __dir__)
  WORKFLOW = File.join(ROOT, "doc/examples/ci/rackbench.yml")
  BURN_US = 200
  FAIL_ON = "cpu>25%,rps>25%"

  # Everything runs once, in order, for all the assertions below.
  def self.outcome
    @outcome ||= new("setup").send(:run_scenario)
  end

  Minitest.after_run { FileUtils.rm_rf(@outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }

  def git(dir, *args)
    env = { "GIT_AUTHOR_NAME" => "ci", "GIT_AUTHOR_EMAIL" => "ci@example.org", "GIT_COMMITTER_NAME" => "ci",
            "GIT_COMMITTER_EMAIL" => "ci@example.org" }
    out, status = Open3.capture2e(env, "git", "-C", dir, *args)
    raise "git #{args.join(" ")}: #{out}" unless status.success?

    out.strip
  end

  def commit(dir, message, files)
    files.each do |name, text|
      FileUtils.mkdir_p(File.dirname(File.join(dir, name)))
      File.write(File.join(dir, name), text)
    end
    FileUtils.chmod(0o755, File.join(dir, "bench/build")) if files.key?("bench/build")
    git(dir, "add", "-A")
    git(dir, "commit", "-q", "-m", message)
    git(dir, "rev-parse", "HEAD")
  end

  def tool(bin, name, text)
    path = File.join(bin, name)
    File.write(path, text)
    FileUtils.chmod(0o755, path)
  end

  def run_scenario
    dir = Dir.mktmpdir("rackbench-ci-workflow")
    app = File.join(dir, "app")
    temp = File.join(dir, "runner-temp")
    bin = File.join(dir, "bin")
    gh_log = File.join(dir, "gh")
    [app, temp, bin, gh_log].each { |d| FileUtils.mkdir_p(d) }
    tool(bin, "rackbench", "#!/bin/sh\nexec #{RbConfig.ruby.shellescape} #{Rackbench::Test::Cli::EXE.shellescape} \"$@\"\n")
    tool(bin, "gh", <<~SH)
      #!/bin/sh
      # The fake gh: what it was asked, and the body it would have posted.
      [ -n "$GH_TOKEN" ] || { echo "no GH_TOKEN" >&2; exit 1; }
      n=$(ls #{gh_log.shellescape} | wc -l)
      echo "$*" > #{gh_log.shellescape}/call-$n
      cp "$5" #{gh_log.shellescape}/body-$n.md
    SH

    hello = File.read(File.join(ROOT, "apps/rack-hello/config.ru"))
    git(app, "init", "-q", "-b", "main")
    first = commit(app, "First version", "config.ru" => hello, "Gemfile" => File.read(File.join(ROOT, "apps/rack-hello/Gemfile")),
                                         "README.md" => "An app.\n", "bench/build" => "#!/bin/sh\nset -e\nruby -c config.ru\n",
                                         "bench/rackbench.yml" => <<~YAML)
                                           name: app-ci
                                           batches: 5
                                           servers: [puma]
                                           apps:
                                             - { name: app, path: .., expect_content_type: text/plain, expect_body: "Hello, World!" }
                                           processes: 1
                                           threads: 1
                                           load: { connections: 2, duration: 1s, warmup: 0.5s, timeout: 2s }
                                         YAML
    docs = commit(app, "Say more in the README", "README.md" => "An app that says hello.\n")
    git(app, "checkout", "-q", first)
    burn = commit(app, "Burn #{BURN_US} us per request",
                  "config.ru" => "ENV[\"RACK_HELLO_BURN_US\"] = \"#{BURN_US}\"\n#{hello}")

    runner = WorkflowRunner.new(WORKFLOW, job: "benchmark")
    store = File.join(dir, "store")
    summary = File.join(dir, "step-summary.md")
    env = ENV.to_h.merge("PATH" => "#{bin}:#{ENV.fetch("PATH")}", "RUNNER_TEMP" => temp, "GITHUB_WORKSPACE" => app,
                         "GITHUB_STEP_SUMMARY" => summary, "CI" => "true")
    jobs = {}
    [[:push, first, "push", nil, nil], [:docs, docs, "pull_request", 7, "docs"], [:burn, burn, "pull_request", 8, "burn"]]
      .each_with_index do |(key, sha, event, pr, ref), i|
        git(app, "checkout", "-q", sha)
        File.write(summary, "")
        context = { "github.event_name" => event, "github.event.pull_request.number" => pr, "github.head_ref" => ref,
                    "github.run_id" => i + 1, "github.token" => "not-a-token", "runner.temp" => temp }
        job = runner.run(context: context, workspace: app, env: env,
                         overrides: { "BENCH_HISTORY_DIR" => store, "FAIL_ON" => FAIL_ON })
        jobs[key] = { job: job, summary: File.read(summary), bodies: Dir[File.join(gh_log, "body-*.md")].sort.map { |f| File.read(f) },
                      calls: Dir[File.join(gh_log, "call-*")].sort.map { |f| File.read(f).strip } }
      end

    history, _, history_status = rackbench("history", "--results", File.join(store, "main"), "--results",
                                           File.join(temp, "rackbench-pr"), "--figure", "cpu", "--json", chdir: dir)
    few = File.join(dir, "few")
    *, few_run = rackbench("run", File.join(app, "bench/rackbench.yml"), "--batches", "2", "--results", few, chdir: dir)
    few_gate, few_gate_err, few_gate_status = rackbench("gate", File.join(store, "main"), few, "--fail-on", FAIL_ON,
                                                        chdir: dir)
    few_gate += few_gate_err
    { dir: dir, app: app, store: store, shas: { first: first, docs: docs, burn: burn }, jobs: jobs, runner: runner,
      history: history, history_status: history_status, few_run: few_run, few_gate: few_gate, few_gate_status: few_gate_status }
  end

  def job(key) = outcome[:jobs].fetch(key)

  def describe_steps(key)
    job(key)[:job].steps.map { |s| "#{s.name}: #{s.skipped? ? "skipped" : s.exit_code}\n#{s.output}" }.join("\n")
  end

  it "stores a push to main as main's run, labelled with its revision, and draws the history" do
    push = job(:push)[:job]
    assert push.success, describe_steps(:push)
    assert(push.steps.select { |s| s.name.include?("Gate") || s.name.include?("Post") }.all?(&:skipped?))
    experiments = Rackbench::Store.open(File.join(outcome[:store], "main"), &:experiments)
    labels = Rackbench::Labels.from_h(experiments.last[:labels])
    assert_equal({ "branch" => "main", "run" => "1" }, labels.given)
    assert_equal [outcome[:shas][:first], "First version"], labels.revision("app", "app").values_at("commit", "subject")
    assert_match(/History of app-ci: server CPU per request per configuration over 1 run/, push.step("History of main").output)
    assert_match(/```\nHistory of app-ci/, job(:push)[:summary])
    assert_equal 0, push.steps.last.exit_code, "the history page exists to upload"
  end

  it "passes a pull request that does not change the app's speed (A/A), and posts the summary" do
    docs = job(:docs)
    assert docs[:job].success, describe_steps(:docs)
    assert_equal 0, docs[:job].step("Gate against main").exit_code
    assert_equal ["pr comment 7 --body-file #{File.join(outcome[:dir], "runner-temp/rackbench-summary.md")}"], docs[:calls]
    body = docs[:bodies].first
    assert body.start_with?("## rackbench gate: ✅ ok\n"), body
    assert_includes body, "pr=7; app app #{outcome[:shas][:docs][0, 10]}"
    assert_includes docs[:summary], "## rackbench gate: ✅ ok"
  end

  it "fails a pull request whose commit adds the slowdown with the regression exit code, naming it" do
    burn = job(:burn)
    refute burn[:job].success
    gate = burn[:job].step("Gate against main")
    assert_equal Rackbench::CLI::EXIT_REGRESSED, gate.exit_code, describe_steps(:burn)
    assert_match(/^rackbench gate: regressed: 1 of 1 configuration regressed beyond the thresholds \(exit 3\)$/, gate.output)
    assert_equal 0, burn[:job].step("Post the summary").exit_code, "posted whatever the gate said"
    body = burn[:bodies].last
    assert body.start_with?("## rackbench gate: ❌ regressed\n"), body
    assert_match(/^\| ❌ \| ruby=ruby server=puma app=app processes=1 threads=1 \| server CPU per request \| [\d.]+us \| [\d.]+us \| \+\d+\.\d% \| \d\.\d{3} \(/, body)
    # requests/s is judged too, but on a loaded machine its interval may be
    # too wide to rule either way: its row is there, whatever its verdict.
    assert_match(/^\| (❌)? \| ruby=ruby server=puma app=app processes=1 threads=1 \| requests\/s \| \d+ \| \d+ \| −\d+\.\d% \| \d\.\d{3} \(/, body)
    assert_includes body, "**Candidate:** experiment app-ci (id 1) · branch=burn pr=8; app app #{outcome[:shas][:burn][0, 10]}"
    assert_includes body, "**Baseline:** experiment app-ci (id 1) · branch=main run=1; app app #{outcome[:shas][:first][0, 10]}"
  end

  it "marks the burning run as the change point of the history, and names its revision" do
    assert outcome[:history_status].success?, outcome[:history]
    doc = JSON.parse(outcome[:history])
    assert_equal 2, doc["runs"].size
    change = doc["configs"].first["change_points"]
    assert_equal [1], change.map { |c| c["run"] }
    assert_equal "up", change.first["direction"], "server CPU per request went up"
    burn = outcome[:shas][:burn]
    assert_equal ["app app #{outcome[:shas][:first][0, 10]} → #{burn[0, 10]} \"Burn #{BURN_US} us per request\"",
                  "branch=burn", "pr=8", "run=(none)"], change.first["changes"]
  end

  it "cannot judge a run of too few batches, and says why" do
    assert outcome[:few_run].success?
    assert_equal Rackbench::CLI::EXIT_CANNOT_SAY, outcome[:few_gate_status].exitstatus, outcome[:few_gate]
    # A CI log is no terminal: the gate's lines wrap at 100 columns, so the reason may span two.
    assert_includes outcome[:few_gate].gsub(/\n +/, " "), "candidate has 2 batches; a CI needs at least 5 per side"
    assert_match(/^rackbench gate: cannot say: 1 of 1 configuration cannot be judged \(exit 4\)$/, outcome[:few_gate])
  end

  it "runs every command of the workflow" do
    ran = %i[push docs burn].flat_map { |key| job(key)[:job].steps.reject(&:skipped?).map(&:name) }.uniq
    all = YAML.safe_load(File.read(WORKFLOW)).dig("jobs", "benchmark", "steps").map { |s| s["name"] || s["uses"] }
    assert_equal all.sort, ran.sort
  end
end
