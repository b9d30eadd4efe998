# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "support/redmine_app"

# An app nobody here wrote, on real services: Redmine (Debian's package,
# test/support/redmine_app.rb) with its own Gemfile.lock, on the PostgreSQL and
# Redis that rackbench starts from `services:`, its schema and data made by
# its own setup (migrations, default data, four users), loaded by four
# connections that log in as four different users through its
# CSRF-protected form and write notes. Two batches prove that:
# - each connection is its own user: the engine's probes at both edges of
#   the window see each slot's own page, and Redmine's own log (to the
#   server's output: RAILS_LOG_TO_STDOUT) names all four users;
# - every batch starts from the same database state: the row count of
#   every table, checked by rackbench against the template before each
#   trial, is the same before both, though each trial wrote notes;
# - PostgreSQL's CPU per request is reported;
# - the gems are the app's own lock's (Rails 7.2, pg).
describe "Redmine on services (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-redmine") }
  let(:results) { File.join(dir, "results") }
  let(:root) { File.expand_path("../..", __dir__) }

  after { FileUtils.rm_rf(dir) }

  it "logs four users in, starts every batch from the same rows, and reports PostgreSQL's CPU per request" do
    app = RedmineApp.dir
    file = File.join(dir, "redmine.yml")
    # A count of requests, not seconds (at load 14 a 3-s window got no
    # answer from Redmine's four logins): each slot logs in and writes its
    # first note before the window (the warmup's 12 requests are those),
    # and proves its session just before the window and after it.
    File.write(file, <<~YAML)
      name: redmine-services
      batches: 2
      servers: [puma]
      threads: 4
      apps:
        - name: redmine
          path: #{app}
          env: { REDMINE_LANG: en, RAILS_LOG_TO_STDOUT: "1" }
          setup: { command: #{RedmineApp::SETUP}, timeout: 20m }
          services: [postgresql, redis]
          health: /login
          load_path: /projects/bench/issues
          expect_body: Benchmark issue
          expect_session_body: Logged in as
      load: { requests: #{RedmineApp::REQUESTS}, connections: 4, count: 60, warmup_count: 12, timeout: 30s }
    YAML
    out, err, status = rackbench("run", file, "--results", results)
    assert status.success?, "#{out}\n#{err}"
    trials = Rackbench::Store.open(results, &:trials).sort_by(&:batch)
    assert_equal [true, true], trials.map(&:ok?), trials.map(&:reason).compact.join("\n")

    logins = RedmineApp.logins
    trials.each do |trial|
      # Four connections, four users, each proved at the window's start
      # (its login done before it) and after its end.
      users = trial.result["users"]
      assert_equal [4, 1], [users["count"], users["slots_per_user_max"]], "batch #{trial.batch}: one user per slot"
      start = trial.result.dig("probes", "start")
      assert_equal [0, 4], [start["failed"], start["passed"] + start["unchecked"]], "batch #{trial.batch}: #{start}"
      assert_equal 4, start["passed"], "batch #{trial.batch}: every slot its own page at the start: #{start}"
      assert_equal 4, trial.result.dig("probes", "end", "passed"), "batch #{trial.batch}: every slot its own page at the end"
      # Redmine's own log of the trial (its server's output) names every user it served.
      log = File.read(trial.log_path)
      assert_equal logins, logins.select { |login| log.include?("Current user: #{login} (id=") }, "batch #{trial.batch}"
      # Each session wrote a note (the state below changes in every trial)
      # before the window, with its login.
      note = trial.result["entries"].find { |entry| entry["name"] == "first-note" }
      written = [note["status"], note["warmup"]["status"]].sum { |by_code| by_code.select { |code, _| code.start_with?("2") }.values.sum }
      assert_operator written, :>=, 4, "batch #{trial.batch}: #{note.slice("status", "warmup", "errors")}"
    end

    # The same rows before every trial, checked against the template.
    states = trials.map { |trial| trial.services.find { |s| s["name"] == "postgresql" }["state"] }
    assert_operator states.first["tables"], :>, 40, "Redmine's schema"
    assert_operator states.first["rows"], :>, 0
    assert_equal [states.first] * 2, states, "both batches start from the template's rows"
    assert trials.all? { |trial| trial.services.all? { |s| s["restore_s"] } }, "restored before each trial"

    # The app's own locked gems ran.
    locked = RedmineApp.locked_versions.values_at("rails", "pg")
    assert_match(/\A7\.2\.\d+ 1\.5\.\d+\z/, locked.join(" "), "the lock's Rails 7.2 and pg 1.5")
    assert_equal locked, trials.first.gem_versions.values_at("rails", "pg")

    # PostgreSQL's CPU per request in the report.
    report, = rackbench("report", "--results", results)
    assert_match(/^  \S+: PostgreSQL \d+\.\d+: \d+% of a CPU, [\d.]+(us|ms) per request, [\d.]+ MB peak$/, report)
    json, = rackbench("report", "--results", results, "--json")
    postgresql = JSON.parse(json)["configs"].first["services"].find { |s| s["name"] == "postgresql" }
    assert_operator postgresql["cpu_us_per_request"], :>, 0
    assert_equal 2, postgresql["batches"]
  end
end
