# frozen_string_literal: true

require "test_helper"
require "json"
require "rss"
require "stringio"
require "support/publish_runs"

# Regressions as `rackbench publish` stores them and people judge them:
# `rackbench regressions` (list, show, set, bisected), a person's state
# that publish keeps, the Atom feed (one entry per regression for its
# whole life). --on-regression's command (a process) is
# test/integration/regressions_hook_test.rb.
describe "rackbench regressions" do
  let(:root) { Dir.mktmpdir("rackbench-regressions") }
  let(:results) { File.join(root, "results") }
  let(:site) { File.join(root, "site") }
  after { FileUtils.rm_rf(root) }

  # Runs 0-5, the 1-thread configuration 10% slower from run 3.
  before { PublishRuns.six_runs(results) }

  include PublishRuns::Cli

  def publish(*argv) = cli("publish", "--results", results, "--out", site, *argv)

  def regressions(*argv) = cli("regressions", "--results", results, *argv)

  def feed = RSS::Parser.parse(File.read(File.join(site, "regressions.xml")))

  it "lists the open ones, shows one, and keeps a person's state, who set it and why" do
    publish
    code, out, = regressions
    assert_equal 0, code
    assert_match(/\| +1 \| confirmed \| bench +\| threads=1 +\| requests\/s \| −10\.\d%/, out)
    assert_includes out, "app own #{PublishRuns.commit(2)[0, 10]}..#{PublishRuns.commit(3)[0, 10]}"

    code, out, = regressions("set", "1", "false-positive", "--note", "a noisy neighbour that week", "--by", "ko1")
    assert_equal 0, code
    assert_match(/#1 false positive/, out)
    assert_match(/state -> false positive by ko1: a noisy neighbour that week/, out.lines.last)
    assert_equal "No regression.\n", regressions[1], "a false positive is not open"
    assert_match(/false positive/, regressions("--all")[1])
    assert_match(/false positive/, regressions("--state", "false-positive,accepted")[1])

    publish
    doc = JSON.parse(regressions("show", "1", "--json")[1])
    assert_equal %w[false_positive ko1 a\ noisy\ neighbour\ that\ week], doc.values_at("state", "state_by", "state_note")
    assert_equal [%w[detected detected rackbench\ publish], %w[state confirmed rackbench\ publish], %w[state false_positive ko1]],
                 doc["events"].map { |e| e.values_at("event", "state", "by") }, "publish left the person's state alone"
  end

  it "keeps a bisect's result with a regression, and shows it on its page" do
    publish
    File.write(File.join(root, "bisect.json"), JSON.generate("first_bad" => PublishRuns.commit(3), "steps" => 4))
    code, out, = regressions("bisected", "1", "--result", File.join(root, "bisect.json"), "--by", "nightly")
    assert_equal 0, code, out
    assert_match(/bisect result attached/, out)
    publish
    assert_includes File.read(File.join(site, "regressions/1.html")), PublishRuns.commit(3)
    assert_equal PublishRuns.commit(3), JSON.parse(File.read(File.join(site, "data/regressions/1.json")))["bisect"]["first_bad"]
  end

  it "says a rackbench bisect's result in words: its status, each step's first bad commit and confirmation" do
    publish
    fixture = File.expand_path("../fixtures/bisect/two_steps.json", __dir__)
    first_bad = JSON.parse(File.read(fixture))["steps"].map { |step| step["first_bad"]["commit"] }
    code, out, = regressions("bisected", "1", "--result", fixture, "--by", "nightly")
    assert_equal 0, code, out
    assert_match(/^  bisect: found: 2 steps, their first bad commits #{first_bad[0][0, 10]} and #{first_bad[1][0, 10]}$/, out)
    assert_match(/^    first bad commit #{first_bad[0]} Commit 10: slower: 1[12]\.\d\d% worse .* than \h{10}; confirmed in an interleaved run/, out)
    publish
    page = File.read(File.join(site, "regressions/1.html"))
    assert_match(/<p>found: 2 steps, their first bad commits #{first_bad[0][0, 10]} and #{first_bad[1][0, 10]}<\/p>/, page)
    assert_match(/<li>first bad commit #{first_bad[1]} Commit 20: slower: /, page)
    assert_includes page, "<details><summary>The bisect document</summary><pre>"
  end

  it "documents every key of the regression document in doc/output.md, and no other" do
    publish
    doc = JSON.parse(regressions("show", "1", "--json")[1])
    text = File.read(File.expand_path("../../doc/output.md", __dir__))[/^## The regression document.*?(?=^## )/m]
    documented = text.scan(/^\| ((?:`[a-z_]+`(?:, )?)+) \|/).flat_map { |(cells)| cells.scan(/`([a-z_]+)`/).flatten }
    assert_equal (doc.keys + ["url"]).sort, documented.sort
  end

  it "says in one line what it cannot do" do
    publish
    assert_equal [2, "", "rackbench: unknown state 'gone' (states: detected, confirmed, fixed, false-positive, accepted)\n"],
                 regressions("set", "1", "gone")
    assert_match(/no regression 9 in .*results\.db \(rackbench regressions lists them\)/, regressions("show", "9")[2])
    assert_match(/regressions set takes ID and STATE/, regressions("set", "1")[2])
    File.write(File.join(root, "bad.json"), "{")
    assert_match(/--result .*bad\.json: not JSON/, regressions("bisected", "1", "--result", File.join(root, "bad.json"))[2])
    assert_match(/regressions takes list, show, set or bisected/, regressions("forget")[2])
  end

  it "feeds each regression as one entry for its whole life, updated when its state changes" do
    publish("--url", "https://bench.example.org/site/")
    entries = feed.items
    assert_equal 1, entries.size
    uid = entries.first.id.content
    assert_match(/\Aurn:uuid:\h{8}-/, uid)
    assert_equal "https://bench.example.org/site/regressions/1.html", entries.first.link.href
    assert_match(/#1 confirmed: requests\/s −10\.\d% in threads=1 \(bench\)/, entries.first.title.content)
    before = entries.first.updated.content

    regressions("set", "1", "accepted", "--note", "the price of the cache")
    publish("--url", "https://bench.example.org/site/")
    entries = feed.items
    assert_equal [uid], entries.map { |e| e.id.content }
    assert_match(/#1 accepted/, entries.first.title.content)
    assert_operator entries.first.updated.content, :>, before
    assert_equal "https://bench.example.org/site/regressions.xml", feed.id.content
  end
end
