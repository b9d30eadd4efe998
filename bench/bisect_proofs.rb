# frozen_string_literal: true

# The proofs of `rackbench bisect` that take too long for the suite
# (doc/performance.md, "Bisect"), each on a history made here with fixed
# dates (test/support/bisect_repos.rb), run as a user runs it, with real
# servers under valgrind (instructions per request):
#
#   app        a Rack app, 64 commits, commit 40 makes the page 2% slower;
#              killed with -9 once 3 commits are measured, then --resume
#   two-steps  the same app, 32 commits, commits 10 and 20 each 0.6%
#   no-step    the same app, 64 commits that change nothing measurable
#   ruby       Ruby 3.4.5's release tarball and 24 commits on top (commit
#              9's build fails, commit 17 adds a loop to rb_hash_aset),
#              rails-hello; SPINS (default 25) sets the loop's length: 3.4.5
#              calls rb_hash_aset 125 times in a rails-hello request
#              (callgrind's calls, 200 requests), at about 5.5 instructions
#              an iteration, so 25 are about 17k instructions, 1% of its
#              1.745M. --bad is the tip: the search's path (0, 24, 12, 18,
#              15, 16, 17) never reaches commit 9, so
#   ruby-skip  after `ruby`, in its directory: the same history bisected
#              again with --bad at commit 18 and --resume, whose first
#              split is commit 9: its build fails and is skipped, commit 8
#              is measured instead, and every commit the first bisection
#              measured is read from the store
#
#   bundle exec ruby bench/bisect_proofs.rb PROOF [DIR]   # DIR default /tmp/bisect-proofs
#
# Each writes DIR/PROOF/ (the repository, the experiment file, the results,
# out.txt) and prints a JSON summary: wall times, load averages, the
# commits measured, trials per commit, and what was found.
require "fileutils"
require "json"
require "open3"
require "rbconfig"
$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
$LOAD_PATH.unshift File.expand_path("../test", __dir__)
require "rackbench"
require "support/bisect_repos"

PROOF = ARGV[0] || abort("usage: bench/bisect_proofs.rb app|two-steps|no-step|ruby|ruby-skip [DIR]")
DIR = File.join(ARGV[1] || "/tmp/bisect-proofs", PROOF == "ruby-skip" ? "ruby" : PROOF)
EXE = File.expand_path("../exe/rackbench", __dir__)
REPOS = Rackbench::Test::BisectRepos
# 2,000 block calls a request: about 1.24M instructions per request on
# Ruby 3.1 with Puma; 48 more are 2%, 15 more 0.6%.
ITERATIONS = 2000

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
def load_average = File.read("/proc/loadavg").split.first(3).map(&:to_f)

def app_experiment(name)
  File.join(DIR, "bisect.yml").tap do |path|
    File.write(path, <<~YAML)
      name: #{name}
      servers: [puma]
      apps:
        - { name: app, path: app, expect_body: "Hello, bisect!" }
      load: { count: 200 }
    YAML
  end
end

def bisect_argv(file, good, bad, *more)
  [RbConfig.ruby, EXE, "bisect", file, "--good", good, "--bad", bad, "--results", File.join(DIR, "results"), *more]
end

# Runs the command to its end, its output into DIR/NAME.txt; [wall s, status, output].
def run(name, argv)
  started = now
  out, status = Open3.capture2e(*argv)
  File.write(File.join(DIR, "#{name}.txt"), out)
  [(now - started).round(1), status.exitstatus, out]
end

def stored
  db = File.join(DIR, "results", "results.db")
  return [] unless File.exist?(db)

  Rackbench::Store.open(File.join(DIR, "results")) do |store|
    store.experiments.flat_map do |e|
      store.trials(e[:id], result: false).map { |t| { "experiment" => e[:name], "key" => t.key, "ok" => t.ok? } }
    end
  end
end

# The builds of the Ruby history's commits in the build cache: commit
# index, seconds in all and per step (recipe.json), whether ccache was on.
def ruby_builds(commits)
  Dir.glob(File.join(Rackbench::Rubies::Build::Cache.new.root, "*", "recipe.json")).filter_map do |path|
    recipe = JSON.parse(File.read(path))
    next unless recipe.dig("source", "path") == File.join(DIR, "ruby")

    { "commit" => commits.index(recipe.dig("source", "commit")), "built_at" => recipe["built_at"],
      "duration_s" => recipe["duration_s"], "steps_s" => recipe["steps_s"], "ccache" => recipe["ccache"] }
  end.sort_by { |b| b["built_at"].to_s }
end

def summary(extra)
  trials = stored
  per_experiment = trials.group_by { |t| t["experiment"] }.transform_values(&:size)
  doc = JSON.parse(File.read(File.join(DIR, "results", "bisect.json")))
  {
    "proof" => PROOF, "load_average_end" => load_average, "status" => doc["status"], "summary" => doc["summary"],
    "ends" => doc.dig("ends", "text"),
    "steps" => doc["steps"].map do |s|
      { "first_bad" => s["first_bad"]["subject"], "exact" => s["exact"], "effect" => s["effect"]["text"],
        "confirmation" => [s.dig("confirmation", "status"), s.dig("confirmation", "judgement", "text")] }
    end,
    "measured" => doc["measured"].map { |r| [r["index"], r["status"], r["batches"], r.dig("against_good", "text")] },
    "trials" => trials.size, "trials_per_experiment" => per_experiment,
    "duplicates" => trials.size - trials.uniq { |t| [t["experiment"], t["key"]] }.size
  }.merge(extra)
end

unless PROOF == "ruby-skip"
  FileUtils.rm_rf(DIR)
  FileUtils.mkdir_p(DIR)
end
result = case PROOF
         when "app"
           commits = REPOS.app_history(File.join(DIR, "app"), commits: 64, iterations: ITERATIONS, steps: { 40 => 48 })
           file = app_experiment("page")
           started = now
           load_start = load_average
           pid = Process.spawn(*bisect_argv(file, commits.first, "main"), out: File.join(DIR, "killed.txt"),
                                                                          err: %i[child out], pgroup: true)
           sleep 5 until stored.group_by { |t| t["experiment"] }.count { |_, list| list.size >= 5 } >= 3
           Process.kill(:KILL, pid)
           Process.wait(pid)
           killed_s = (now - started).round(1)
           before = stored.size
           wall_s, code, = run("resumed", bisect_argv(file, commits.first, "main", "--resume"))
           summary("load_average_start" => load_start, "killed_after_s" => killed_s, "stored_when_killed" => before,
                   "resume_s" => wall_s, "exit" => code)
         when "two-steps"
           commits = REPOS.app_history(File.join(DIR, "app"), commits: 32, iterations: ITERATIONS, steps: { 10 => 15, 20 => 15 })
           load_start = load_average
           wall_s, code, = run("out", bisect_argv(app_experiment("page"), commits.first, "main"))
           summary("load_average_start" => load_start, "wall_s" => wall_s, "exit" => code)
         when "no-step"
           commits = REPOS.app_history(File.join(DIR, "app"), commits: 64, iterations: ITERATIONS)
           load_start = load_average
           wall_s, code, = run("out", bisect_argv(app_experiment("page"), commits.first, "main"))
           summary("load_average_start" => load_start, "wall_s" => wall_s, "exit" => code)
         when "ruby"
           require "support/test_rubies"
           spins = Integer(ENV.fetch("SPINS", "25"))
           commits = REPOS.ruby_history(File.join(DIR, "ruby"), tarball: TestRubies.tarball("3.4"), spins: spins)
           file = File.join(DIR, "bisect.yml")
           File.write(file, <<~YAML)
             name: hash-aset
             rubies:
               - { name: dev, build: { source: ruby } }
             servers: [puma]
             apps: [rails-hello]
             load: { count: 200, timeout: 10s }
           YAML
           load_start = load_average
           # The step is about 1%: a bisection of it asks for half (as the
           # nightly script asks for half of a regression's change).
           wall_s, code, out = run("out", bisect_argv(file, commits.first, "main", "--threshold", "0.5%"))
           summary("load_average_start" => load_start, "wall_s" => wall_s, "exit" => code, "spins" => spins,
                   "builds_announced" => out.scan(/: building its ruby/).size, "builds" => ruby_builds(commits))
         when "ruby-skip"
           commits = REPOS.commits(File.join(DIR, "ruby"))
           before = stored.size
           load_start = load_average
           wall_s, code, out = run("skip", bisect_argv(File.join(DIR, "bisect.yml"), commits.first, commits[18],
                                                       "--threshold", "0.5%", "--resume"))
           summary("load_average_start" => load_start, "wall_s" => wall_s, "exit" => code,
                   "trials_before" => before, "builds_announced" => out.scan(/: building its ruby/).size,
                   "builds" => ruby_builds(commits), "journal" => File.read(File.join(DIR, "results", "bisect-builds.json")))
         else abort "unknown proof #{PROOF}: app, two-steps, no-step, ruby or ruby-skip"
         end
puts JSON.pretty_generate(result)
