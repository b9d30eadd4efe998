# frozen_string_literal: true

require "test_helper"
require "support/bisect_repos"
require "json"
require "rbconfig"
require "rss"
require "shellwords"

# Real runs of three revisions of an app, published after each: the app
# (a git repository of its own) has two pages, a home page and a list of
# posts, sent in a request list 1:1; its middle revision makes the list
# page burn 300 µs of CPU per request. Each run is `rackbench run` (Puma
# 1x1, five batches of 1 s), labelled with its revision automatically,
# then `rackbench publish` with server CPU per request tracked (the figure
# that moves least on a shared machine) and the documented announcement
# script (doc/examples/nightly/announce-regression.sh) as --on-regression,
# with a fake `gh` that keeps what it was asked.
#
# The site shows the step at the middle revision, confirmed by the third;
# the feed has one entry; the announcement ran once; a re-run of the third
# revision (--label rerun=1) adds no regression and no entry. About 20
# trials, 2-3 minutes.
describe "publishing real runs of three revisions of an app (integration)" do
  before { require_engine! }

  ROOT = File.expand_path("../..", __dir__)
  BURN_US = 300

  APP = <<~RUBY
    # Two pages: a home page, and a list of posts that may burn CPU.
    BURN_US = Integer(File.read(File.join(__dir__, "burn_us")).strip)
    HOME = "Hello from home\\n"
    POSTS = "post 1\\npost 2\\npost 3\\n"
    run(lambda do |env|
      if env["PATH_INFO"] == "/posts"
        deadline = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :float_microsecond) + BURN_US
        nil while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :float_microsecond) < deadline
        [200, { "content-type" => "text/plain" }, [POSTS]]
      else
        [200, { "content-type" => "text/plain" }, [HOME]]
      end
    end)
  RUBY

  def self.outcome
    @outcome ||= new("setup").send(:three_revisions)
  end

  Minitest.after_run { FileUtils.rm_rf(@outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }

  # The app's history, written through the suite's git helper for made
  # repositories (fixed authors and dates, commit by commit).
  def git(dir, *args) = Rackbench::Test::BisectRepos.git(dir, *args)

  def commit(dir, message, files, number)
    files.each { |name, text| File.write(File.join(dir, name), text) }
    Rackbench::Test::BisectRepos.commit(dir, message, number)
  end

  def three_revisions
    dir = Dir.mktmpdir("rackbench-real-runs")
    app = File.join(dir, "app")
    bin = File.join(dir, "bin")
    calls = File.join(dir, "gh-calls")
    [app, bin, calls].each { |d| FileUtils.mkdir_p(d) }
    File.write(File.join(bin, "gh"), "#!/bin/sh\nn=$(ls #{calls.shellescape} | wc -l)\necho \"$@\" > #{calls.shellescape}/call-$n\n")
    FileUtils.chmod(0o755, File.join(bin, "gh"))
    git(app, "init", "--quiet", "--initial-branch=main")
    shas = [commit(app, "Two pages", { "config.ru" => APP, "burn_us" => "0\n", "Gemfile" => File.read(File.join(ROOT, "apps/rack-hello/Gemfile")) }, 0)]
    shas << commit(app, "Render the posts the slow way", { "burn_us" => "#{BURN_US}\n" }, 1)
    shas << commit(app, "Say hello louder", { "config.ru" => APP.sub("Hello from home", "HELLO from home") }, 2)
    File.write(File.join(dir, "pages.txt"), "--- name=home\nGET /\n\n--- name=posts\nGET /posts\n")
    experiment = File.join(dir, "bench.yml")
    File.write(experiment, <<~YAML)
      name: two-pages
      batches: 5
      servers: [puma]
      apps:
        - { name: blog, path: app }
      processes: 1
      threads: 1
      load: { connections: 2, duration: 1s, warmup: 1s, timeout: 2s, requests: pages.txt }
    YAML
    results = File.join(dir, "results")
    site = File.join(dir, "site")
    env = { "PATH" => "#{bin}:#{ENV.fetch("PATH")}", "GH_REPO" => "example/blog", "GH_TOKEN" => "not-a-token" }
    publish = ["publish", "--results", results, "--out", site, "--figures", "cpu", "--json", "--on-regression",
               File.join(ROOT, "doc/examples/nightly/announce-regression.sh")]
    published = [[0, shas[0]], [1, shas[1]], [2, shas[2]], [3, shas[2]]].map do |i, sha|
      git(app, "checkout", "-q", sha)
      assert_rackbench("run", experiment, "--results", results, "--label", "branch=main", *(i == 3 ? ["--label", "rerun=1"] : []))
      JSON.parse(assert_rackbench(*publish, env: env))
    end
    { dir: dir, site: site, shas: shas, published: published, calls: Dir[File.join(calls, "call-*")].sort.map { |f| File.read(f) },
      regressions: JSON.parse(assert_rackbench("regressions", "--results", results, "--all", "--json")) }
  end

  it "finds the step at the middle revision, and the third confirms it" do
    created = outcome[:published].map { |p| p["created"].size }
    assert_equal [0, 1, 0, 0], created, "one regression, found with the middle revision's run"
    regression = outcome[:regressions].first
    assert_equal 1, outcome[:regressions].size
    assert_equal %w[cpu up confirmed], regression.values_at("figure", "direction", "state")
    assert_operator regression["change"], :>, 0.3, "300 µs on every other request of tens of µs"
    sha = outcome[:shas]
    assert_equal [{ "of" => "app", "name" => "blog", "good" => sha[0], "bad" => sha[1] }], regression["range"]["revisions"]
  end

  it "shows the step on the site, and feeds and announces it once, a re-run of the revision adding none" do
    regression = outcome[:regressions].first
    index = JSON.parse(File.read(File.join(outcome[:site], "data/index.json")))
    slug = index["testbeds"].first["slug"]
    config = JSON.parse(File.read(File.join(outcome[:site], "data/#{slug}/testbed.json")))["configs"].first["slug"]
    timeline = JSON.parse(File.read(File.join(outcome[:site], "data/#{slug}/#{config}.json")))
    assert_equal 4, timeline["runs"].size
    cpu = timeline["figures"].first
    assert_equal [[1, regression["id"]]], cpu["steps"].map { |s| [s["run"], s["regression_id"]] }
    assert_includes File.read(File.join(outcome[:site], "regressions/#{regression["id"]}.html")), outcome[:shas][1]

    feed = RSS::Parser.parse(File.read(File.join(outcome[:site], "regressions.xml")))
    assert_equal [regression["uid"]], feed.items.map { |e| e.id.content }
    assert_equal 1, outcome[:calls].size, outcome[:calls].inspect
    assert_match(/\Aissue create --repo example\/blog --title Regression #1: server CPU per request \+\d+\.\d% /, outcome[:calls].first)
    assert_equal [[], [], [regression["id"]], []], outcome[:published].map { |p| p["changed"].map { |r| r["id"] } },
                 "the third run confirmed it; the re-run changed nothing"
  end
end
