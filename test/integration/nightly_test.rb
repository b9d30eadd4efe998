# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"
require "shellwords"
require_relative "../support/test_rubies"

# The nightly example (doc/examples/nightly/rackbench-nightly.sh) end to
# end, on this machine: an "upstream" git repository of Ruby made from the
# pinned 3.4.5 tarball, mirrored, built, run, published; two nights:
#
# 1. night one at the tarball's commit A: one run, no regression;
# 2. three commits land: B (NEWS), C (the test patch that adds a fixed
#    cost to rb_hash_aset, test/fixtures/patches), D (README); night two
#    runs D, publish finds the step (detected), the script runs D again
#    (rerun=1), publish confirms it, and the script bisects A..D, three
#    commits, with `rackbench bisect` over the mirror (a bare repository)
#    and keeps its result with the regression.
#
# It ends with a confirmed regression whose range is A..D and a bisect
# result naming C, on the regression's page too.
#
# Instructions per request (`measure: instructions`, under valgrind), not
# time: a run of 2026-12-03 measured time on this machine at a load of 17
# and its server CPU per request varied by 12% between batches, hiding the
# patch's step; a count of instructions does not depend on the machine's
# load (the patched 3.4.5 counts about 22% more).
#
# Bounded for the suite: windows of 100 requests, five batches a night
# (publish's least for a run's interval), and the bisection at two
# batches a commit (NIGHTLY_BISECT_OPTIONS: a 22% step against a noise of
# about 0.1% needs no more). Builds of 3.4.5 from git take minutes each
# (the first full, the others recompile hash.c with ccache); the commits
# have fixed dates, so later runs of the test find them in the cache, the
# bisection's commits A and D included (a build is keyed by its commit:
# the night's `ref: master` and the bisection's hash are one build).
describe "the nightly example (integration)" do
  before { require_engine! }

  # Constants of the describe block's own (the block is a class: they are
  # not top-level, and no other test file sees them).
  self::SCRIPT = File.join(Rackbench::Test::Cli::ROOT, "doc/examples/nightly/rackbench-nightly.sh")
  self::GIT_ENV = { "GIT_AUTHOR_NAME" => "ruby", "GIT_AUTHOR_EMAIL" => "ruby@example.org",
                    "GIT_COMMITTER_NAME" => "ruby", "GIT_COMMITTER_EMAIL" => "ruby@example.org" }.freeze

  def self.outcome
    @outcome ||= new("setup").send(:two_nights)
  end

  Minitest.after_run { FileUtils.rm_rf(@outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }

  def git(dir, *args)
    out, status = Open3.capture2e(self.class::GIT_ENV, "git", "-C", dir, *args)
    raise "git #{args.join(" ")}: #{out}" unless status.success?

    out.strip
  end

  # Commits with fixed dates: the same tree and message make the same
  # commit in every run of the test, so its builds come from the cache
  # after the first (minutes each on this machine).
  def commit(dir, message)
    @commits = (@commits || 0) + 1
    date = "2026-01-01T00:#{format("%02d", @commits)}:00Z"
    git(dir, "add", "-A")
    out, status = Open3.capture2e(self.class::GIT_ENV.merge("GIT_AUTHOR_DATE" => date, "GIT_COMMITTER_DATE" => date),
                                  "git", "-C", dir, "commit", "-q", "-m", message)
    raise "git commit: #{out}" unless status.success?

    git(dir, "rev-parse", "HEAD")
  end

  # The script as its timer runs it: `rackbench` on PATH (this checkout's,
  # through bin/rackbench), in the environment every test's rackbench gets
  # (Test::Cli.env: no developer's store, this checkout's bundle).
  def night(dir, date, env)
    out, status = Open3.capture2e(Rackbench::Test::Cli.env(env.merge("NIGHTLY_DATE" => date)), "bash",
                                  self.class::SCRIPT, chdir: dir)
    { out: out, code: status.exitstatus }
  end

  def two_nights
    dir = Dir.mktmpdir("rackbench-nightly")
    upstream = File.join(dir, "upstream")
    state = File.join(dir, "state")
    FileUtils.mkdir_p(upstream)
    system("tar", "-xf", TestRubies.tarball("3.4"), "-C", upstream, "--strip-components=1", exception: true)
    git(upstream, "init", "-q", "-b", "master")
    a = commit(upstream, "Ruby 3.4.5")

    bin = File.join(dir, "bin")
    FileUtils.mkdir_p(bin)
    File.write(File.join(bin, "rackbench"), "#!/bin/sh\nexec #{cli_argv.map(&:shellescape).join(" ")} \"$@\"\n")
    FileUtils.chmod(0o755, File.join(bin, "rackbench"))
    experiment = File.join(dir, "nightly.yml")
    File.write(experiment, <<~YAML)
      name: nightly-test
      batches: 5
      measure: instructions
      rubies:
        - { name: master, build: { source: #{File.join(state, "ruby.git")}, ref: master } }
      servers: [puma]
      apps: [rack-hello]
      processes: 1
      threads: 1
      load: { count: 100, warmup_count: 1000, connections: 2, timeout: 10s }
    YAML
    env = { "PATH" => "#{bin}:#{ENV.fetch("PATH")}", "RACKBENCH_NIGHTLY_DIR" => state, "NIGHTLY_EXPERIMENT" => experiment,
            "NIGHTLY_UPSTREAM" => upstream, "NIGHTLY_SITE" => File.join(dir, "site"),
            "NIGHTLY_BISECT_OPTIONS" => "--min-batches 2 --max-batches 3" }
    first = night(dir, "2026-01-01", env)

    File.write(File.join(upstream, "NEWS.md"), "\nNothing new tonight.\n", mode: "a")
    b = commit(upstream, "Say more in NEWS")
    system("patch", "-p1", "-d", upstream, "-i", TestRubies::SLOW_PATCH, "-s", exception: true)
    c = commit(upstream, "Add a fixed cost to rb_hash_aset")
    File.write(File.join(upstream, "README.md"), "\nA typo fixed.\n", mode: "a")
    d = commit(upstream, "Fix a typo in README")
    second = night(dir, "2026-01-02", env)

    regressions = assert_rackbench("regressions", "--results", File.join(state, "results"), "--all", "--json")
    { dir: dir, commits: { a: a, b: b, c: c, d: d }, first: first, second: second, env: env, state: state,
      regressions: JSON.parse(regressions), site: File.join(dir, "site") }
  end

  it "runs a night with no regression, then one that finds, confirms and bisects the slowing commit" do
    assert_equal 0, outcome[:first][:code], outcome[:first][:out]
    assert File.file?(File.join(outcome[:site], "index.html"))
    assert_equal 0, outcome[:second][:code], outcome[:second][:out]
    assert_match(/regression\(s\) found tonight: running #{outcome[:commits][:d]} again/, outcome[:second][:out])

    confirmed = outcome[:regressions].select { |r| r["state"] == "confirmed" }
    refute_empty confirmed, JSON.pretty_generate(outcome[:regressions])
    commits = outcome[:commits]
    confirmed.each do |r|
      assert_equal [{ "of" => "ruby", "name" => "master", "good" => commits[:a], "bad" => commits[:d], "ref" => "master" }],
                   r["range"]["revisions"]
    end
    bisected = confirmed.find { |r| r["bisect"] }
    refute_nil bisected, "a bisect result is kept with the regression"
    assert_includes JSON.generate(bisected["bisect"]), commits[:c], "the bisect names the slowing commit"
    page = File.read(File.join(outcome[:site], "regressions/#{bisected["id"]}.html"))
    assert_includes page, commits[:c]
  end
end
