# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "support/publish_runs"

# `rackbench publish` over stored runs: six labelled runs of one
# experiment whose 4th commit makes the 1-thread configuration 10% slower.
# The site has every page kind and its JSON; the step is one regression,
# confirmed by the run after it; re-publishing writes only what a new run
# changed, and nothing when nothing is new. Real runs:
# test/integration/publish_real_runs_test.rb; a year of them:
# test/integration/publish_year_test.rb.
describe "rackbench publish" do
  let(:root) { Dir.mktmpdir("rackbench-publish") }
  let(:results) { File.join(root, "results") }
  let(:site) { File.join(root, "site") }
  after { FileUtils.rm_rf(root) }

  before { PublishRuns.six_runs(results) }

  def publish(*argv)
    out = StringIO.new
    err = StringIO.new
    code = Rackbench::CLI.run(["publish", "--results", results, "--out", site, *argv], out: out, err: err)
    [code, out.string, err.string]
  end

  def publish_json(*argv)
    code, out, err = publish(*argv, "--json")
    assert_equal 0, code, err
    JSON.parse(out)
  end

  def testbed_slug = JSON.parse(File.read(File.join(site, "data/index.json")))["testbeds"].first["slug"]

  it "writes every page kind, with the JSON beside it, and finds the step as one regression" do
    outcome = publish_json
    assert_equal 6, outcome["summarised"]
    assert_equal 1, outcome["testbeds"]
    assert_equal 1, outcome["created"].size
    regression = outcome["created"].first
    assert_equal ["rps", "down", "confirmed"], regression.values_at("figure", "direction", "state")
    assert_equal "threads=1", regression["config_label"]
    assert_in_delta(-0.1, regression["change"], 0.02)
    assert_equal [{ "of" => "app", "name" => "own", "good" => PublishRuns.commit(2), "bad" => PublishRuns.commit(3) }],
                 regression["range"]["revisions"]

    slug = testbed_slug
    index = JSON.parse(File.read(File.join(site, "data/index.json")))
    config = JSON.parse(File.read(File.join(site, "data/#{slug}/testbed.json")))["configs"].first["slug"]
    %W[index.html regressions/index.html regressions.xml regressions.json #{slug}/index.html #{slug}/compare.html
       #{slug}/#{config}.html regressions/#{regression["id"]}.html data/#{slug}/#{config}.json
       data/regressions/#{regression["id"]}.json assets/vega.js assets/site.js assets/site.css].each do |path|
      assert File.file?(File.join(site, path)), "#{path} written"
    end
    assert_equal 6, Dir[File.join(site, "data/#{slug}/runs/*.js")].size
    assert_equal 1, index["testbeds"].first["open_regressions"]

    timeline = JSON.parse(File.read(File.join(site, "data/#{slug}/#{config}.json")))
    rps = timeline["figures"].find { |f| f["figure"] == "rps" }
    assert_equal [3], rps["steps"].map { |s| s["run"] }
    assert_equal regression["id"], rps["steps"].first["regression_id"]
    assert_equal "default", rps["noise"]["rule"], "six runs: the gate's default until the series learns"
    page = File.read(File.join(site, "#{slug}/#{config}.html"))
    assert_includes page, "regression ##{regression["id"]}"
    refute_match(/<script src="http/, page, "nothing from the network")
  end

  it "writes only what a new run changed, and nothing when nothing is new" do
    first = publish_json
    assert_operator first["written"].size, :>, 10
    assert_empty publish_json["written"], "nothing new: nothing written"

    Rackbench::Store.open(results) { |store| PublishRuns.store(store, 6, rps: [900.0, 4000.0]) }
    again = publish_json
    slug = testbed_slug
    assert_equal 1, again["summarised"]
    assert_empty again["created"]
    written = again["written"]
    assert_includes written, "#{slug}/index.html"
    assert_includes written, "index.html"
    assert(written.any? { |path| path.start_with?("data/#{slug}/runs/") })
    refute(written.any? { |path| path.start_with?("assets/") }, "assets unchanged")
    old_runs = Dir[File.join(site, "data/#{slug}/runs/*.json")].map { |f| "data/#{slug}/runs/#{File.basename(f)}" }
    assert_equal 1, (written & old_runs).size, "only the new run's data, not the old runs'"
  end

  it "adds no regression for a re-run of a revision, and marks the regression fixed by a step back" do
    publish_json
    Rackbench::Store.open(results) do |store|
      PublishRuns.store(store, 6, at: 5, rps: [900.0, 4000.0], given: { "branch" => "main", "rerun" => "1" })
      PublishRuns.store(store, 7, rps: [1000.0, 4000.0])
      PublishRuns.store(store, 8, rps: [1000.0, 4000.0])
    end
    outcome = publish_json
    assert_empty outcome["created"]
    assert_equal ["fixed"], outcome["changed"].map { |r| r["state"] }
    fixed = outcome["changed"].first
    assert_equal 8, fixed["runs"]["fixed"], "the run of commit 7 (experiment id 8: the re-run of 5 is id 7)"
    assert_match(/a later step brought it back/, fixed["state_note"])
  end

  it "refuses to write into a directory of other files, and says what to do" do
    FileUtils.mkdir_p(site)
    File.write(File.join(site, "notes.txt"), "mine")
    code, _, err = publish
    assert_equal 1, code
    assert_match(/holds files but no site of rackbench publish/, err)
    assert_equal "mine", File.read(File.join(site, "notes.txt"))
  end

  it "removes the files of a testbed a later publish leaves out" do
    Rackbench::Store.open(results) { |store| PublishRuns.store(store, 9, given: { "branch" => "dev" }, name: "dev-only") }
    assert_equal 2, publish_json["testbeds"]
    outcome = publish_json("--where", "branch=main")
    assert_equal 1, outcome["testbeds"]
    assert(outcome["removed"].any? { |path| path.include?("dev-only") }, outcome["removed"].inspect)
    assert_empty Dir[File.join(site, "dev-only*")]
  end

  it "says what is wrong with its arguments in one line" do
    code, _, err = Rackbench::CLI.run(["publish", "--results", results], out: StringIO.new, err: (e = StringIO.new)).then { |c| [c, nil, e.string] }
    assert_equal [2, "rackbench: publish needs --out DIR, the site's directory\n"], [code, err]
    code, _, err = publish("--figures", "speed")
    assert_equal 2, code
    assert_match(/unknown figure 'speed'/, err)
    code, _, err = publish("--order", "size")
    assert_equal 2, code
    assert_match(/invalid argument: --order size/, err)
    err = StringIO.new
    assert_equal 2, Rackbench::CLI.run(["publish", "--results", File.join(root, "none"), "--out", site], out: StringIO.new, err: err)
    assert_match(/no results in/, err.string)
  end
end
