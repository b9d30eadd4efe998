# frozen_string_literal: true

require "test_helper"
require "json"
require "support/bisect_repos"

# `rackbench bisect` as a user runs it, on an app's git history, with real
# servers under valgrind: the commit that makes the page 2% slower in
# instructions per request is found, after a kill -9 mid-bisection and a
# --resume that measures no commit twice; then a bisection between two
# commits already measured (no step between them) stops in one line
# without measuring anything. Kept small for the suite's time (4 commits,
# 2 batches each: 12 instructions trials); the issue's full proofs (64
# commits, two steps, a Ruby's 24) are measured by hand:
# bench/bisect_proofs.rb, doc/performance.md.
describe "rackbench bisect (integration)" do

  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-bisect-app") }
  let(:repo) { File.join(dir, "app") }
  let(:results) { File.join(dir, "results") }
  let(:file) do
    File.join(dir, "bisect.yml").tap do |path|
      File.write(path, <<~YAML)
        name: page
        servers: [puma]
        apps:
          - { name: app, path: app, expect_body: "Hello, bisect!" }
        load: { count: 100, warmup_count: 1000, timeout: 10s }
      YAML
    end
  end

  after { FileUtils.rm_rf(dir) }

  def bisect_args(good, bad, *more)
    ["bisect", file, "--good", good, "--bad", bad, "--measure", "instructions", "--min-batches", "2",
     "--max-batches", "3", "--results", results, *more]
  end

  def stored_trials
    Rackbench::Store.open(results) do |store|
      store.experiments.flat_map do |e|
        store.trials(e[:id], result: false).map { |t| [e[:name], t.key, t.status] }
      end
    end
  end

  # Every process a run of this test started (the watchdog marks each).
  def marked_processes
    Dir.glob("/proc/[0-9]*/environ").select do |path|
      File.binread(path).split("\0").include?("RACKBENCH_RESULTS_DIR=#{results}")
    rescue SystemCallError
      false
    end
  end

  it "finds the commit of a 2% step after kill -9 and --resume, measuring no commit twice; then stops at once on no step" do
    # 2,000 iterations a request are about 1.2M instructions; 48 more are 2%.
    commits = Rackbench::Test::BisectRepos.app_history(repo, commits: 4, iterations: 2000, steps: { 3 => 48 })
    pid = spawn_rackbench(*bisect_args(commits.first, "main"))
    begin
      # Killed once the two ends are stored, in the middle of what follows;
      # waits as long as the bisection runs (its deadline guards against a
      # hang only, scaled by how busy the machine is now).
      wait_while_running(pid, timeout_s: 600 * busy_factor, interval_s: 0.5, message: "the two ends measured") do
        File.exist?(File.join(results, "results.db")) && stored_trials.size >= 4
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
    wait_until(timeout_s: 60, interval_s: 0.2, message: "the killed run's servers to be gone") { marked_processes.empty? }
    before_resume = stored_trials

    out, err, status = rackbench(*bisect_args(commits.first, "main", "--resume", "--json"))
    assert status.success?, "#{err}\n#{out}"
    doc = JSON.parse(out)
    assert_equal "found", doc["status"]
    step = doc["steps"].first
    assert_equal [commits[3], commits[2], true], [step["first_bad"]["commit"], step["last_good"]["commit"], step["exact"]]
    assert_equal "confirmed", step.dig("confirmation", "status"), err
    assert_in_delta 0.02, step["effect"]["worsening"], 0.005
    assert_equal "instructions per request", doc["settings"]["figure_words"]
    assert_equal [0, 2, 3, 4], doc["measured"].map { |row| row["index"] }

    trials = stored_trials
    assert_equal trials.size, trials.uniq { |name, key, _| [name, key] }.size
    assert(before_resume.all? { |t| trials.include?(t) }, "what the killed run stored stays")
    by_step = trials.group_by(&:first).transform_values(&:size)
    commit_steps = by_step.reject { |name, _| name.include?(".confirm.") }
    assert_equal({ 2 => 4 }, commit_steps.values.tally, "each of the 4 commits measured in 2 batches, once: #{by_step}")
    assert_equal [4], by_step.select { |name, _| name.include?(".confirm.") }.values
    assert(trials.all? { |_, _, s| s == "ok" })
    Rackbench::Store.open(results) do |store|
      assert_empty store.experiments.flat_map { |e| store.earlier_attempts(e[:id], result: false) }
    end
    assert_empty marked_processes
    assert_empty Rackbench::Test::BisectRepos.git(repo, "status", "--porcelain")

    # Commits 0 and 2 are measured: a bisection between them replays them
    # from the store and stops after the ends, in one line.
    out, err, status = rackbench(*bisect_args(commits.first, commits[2], "--resume"))
    assert status.success?, err
    assert_match(/\Arackbench bisect: nothing to bisect: bad [\d,]+ instructions per request against good [\d,]+ instructions per request: .*not beyond the 1% threshold\n\z/,
                 out.lines.last)
    assert_equal trials.size, stored_trials.size, "nothing measured again"
  end
end
