# frozen_string_literal: true

require "test_helper"
require "json"
require "rackbench/bisect"

# The bisect document's views, from a document a bisection wrote
# (test/fixtures/bisect/two_steps.json: 32 commits over the fakes, steps at
# commits 10 and 20, commit 16 not booting, commit 25 loading another
# Rack), and the document's contract in doc/output.md.
describe "Rackbench::Bisect views" do
  let(:doc) { JSON.parse(File.read(File.expand_path("../fixtures/bisect/two_steps.json", __dir__))) }
  let(:first_bad) { doc["steps"].map { |s| s["first_bad"] } }

  it "writes the terminal's table, each step, what was skipped, and the status line" do
    text = Rackbench::Bisect::Terminal.new(doc).render
    assert_match(/Bisect page: requests\/s of app 'app' along its commits/, text)
    rows = text.lines.grep(/\A\| +\d+ \|/)
    assert_equal doc["measured"].map { |r| r["index"] }, rows.map { |r| r[/\A\| +(\d+)/, 1].to_i }
    assert_match(/\| +16 \| #{doc["measured"].find { |r| r["index"] == 16 }["short"]} \| Commit 16 +\| +skipped \|/, text)
    assert_match(/^Step 1: first bad commit: #{first_bad[0]["commit"]}\n  Commit 10: slower \(Rackbench Test, 2026-05-28T20:\d\d:40\+00:00\)$/, text)
    assert_match(/^  1[12]\.\d\d% worse \(.*\) than #{doc["steps"][0]["last_good"]["short"]}, (49|50|51)% of the change$/, text)
    assert_match(/^  confirmed in an interleaved run of both commits: 1[12]\.\d\d% worse/, text)
    assert_match(/^Step 2: first bad commit: #{first_bad[1]["commit"]}$/, text)
    assert_match(/^    rps\.txt +\| 2 \+-$/, text)
    assert_match(/^Skipped: \h{10} Commit 16: batch 1 failed: server exited with status 1 before it was ready: broken on purpose$/, text)
    assert_match(/^Good \h{10} to bad \h{10} \(32 commits\): 22\.\d\d% worse/, text)
    assert text.end_with?("rackbench bisect: found: 2 steps, their first bad commits #{first_bad[0]["short"]} and " \
                          "#{first_bad[1]["short"]}\n")
  end

  it "fits the terminal's view within 100 columns, and gives every cell whole without a width (--wide)" do
    doc["measured"].find { |r| r["index"] == 10 }["subject"] = "Commit 10: move the session store's cookie " \
                                                                "rotation into the middleware stack"
    narrow = Rackbench::Bisect::Terminal.new(doc, width: 100).render
    assert_empty narrow.lines.reject { |line| Rackbench::Text::Wrap.width(line.chomp) <= 100 }
    assert_match(/^\| +10 \| \h{10} \| Commit 10: +\| +881 \| +3 \| \+1[12]\.\d\d% \(\+1[12]\.\d\d to \+1[12]\.\d\d\) \| after step 1 \|$/,
                 narrow)
    assert_match(/^\| +32 \| \h{10} \| Commit 32 +\| +77\d \| +3 \| \+22\.\d\d% .*\| bad \* +\|$/, narrow)
    assert_match(/^\* gems differ: #32 \h{10} against the good commit: rack 3\.1\.0 vs 3\.2\.0$/, narrow)
    wide = Rackbench::Bisect::Terminal.new(doc).render
    assert_includes wide, "| Commit 10: move the session store's cookie rotation into the middleware stack |"
  end

  it "writes Markdown for an issue: the status, each step with its diff folded, the commits, escaped" do
    doc["steps"][0]["first_bad"]["subject"] = "Use the *fast* path | <b>"
    text = Rackbench::Bisect::Markdown.new(doc).render
    assert text.start_with?("## rackbench bisect: ✅ found\n\n**2 steps, their first bad commits")
    assert_includes text, "### Step 1: `#{first_bad[0]["short"]}` Use the \\*fast\\* path \\| \\<b\\>\n"
    assert_match(/Requests\/s: 1[12]\.\d\d% worse \(.*\) than `\h{10}` \((49|50|51)% of the change\); \*\*confirmed\*\* in an interleaved run/, text)
    assert_includes text, "<details><summary>git diff --stat: 2 files changed, 2 insertions(+), 2 deletions(-)</summary>"
    assert_includes text, "<details><summary>12 commits measured</summary>"
    assert_match(/\| 16 \| `\h{10}` \| Commit 16 \|  \| 0 \|  \| skipped: batch 1 failed: server exited/, text)
    assert_match(/\| 32 \| `\h{10}` \| Commit 32 \| 77\d \| 3 \| 22\.\d\d% worse .* \| bad \(gems differ: rack 3\.1\.0 vs 3\.2\.0\) \|/, text)
    assert_equal 1, text.scan("| # | commit |").size
  end

  it "draws the figure along the commits walked, in a page that makes no request" do
    doc["measured"][1]["subject"] = "</script><script>alert(1)</script>"
    html = Rackbench::Bisect::HtmlPage.new(doc).render
    assert_includes html, "<h1>Bisect: page</h1>"
    refute_includes html, "<script>alert(1)"
    spec = JSON.parse(html[%r{<script type="application/json" id="spec-bisect">(.*?)</script>}m, 1].gsub("\\u003c", "<")
                                                                                               .gsub("\\u003e", ">")
                                                                                               .gsub("\\u0026", "&"))
    points = spec["layer"].find { |l| l.dig("mark", "type") == "point" && l.dig("mark", "filled") }["data"]["values"]
    assert_equal doc["measured"].reject { |r| r["median"].nil? }.map { |r| r["index"] }, points.map { |p| p["index"] }
    assert_equal %w[good between\ steps bad], points.map { |p| p["side"] }.uniq
    steps = spec["layer"].find { |l| l["layer"] }["data"]["values"]
    assert_equal [9.5, 19.5], steps.map { |s| s["at"] }
    crosses = spec["layer"].find { |l| l.dig("mark", "shape") == "cross" }["data"]["values"]
    assert_equal [16], crosses.map { |c| c["index"] }
    refute_match(%r{<script[^>]+src=|<link[^>]+href="http}, html)
  end

  it "has every key of the document listed in doc/output.md" do
    section = File.read(File.expand_path("../../doc/output.md", __dir__))[/^## The bisect document.*?(?=^## )/m]
    keys = doc.keys - %w[format format_version generated_at rackbench_version]
    keys += doc["steps"].first.keys.map { |k| "steps.#{k}" }
    keys += doc["measured"].flat_map(&:keys).uniq.map { |k| "measured.#{k}" }
    documented = section.scan(/`([a-z_.]+)`/).flatten
    commit = doc["good"].keys
    judgement = doc["ends"].keys
    missing = keys.reject do |key|
      documented.include?(key) || commit.include?(key.split(".").last) || section.include?("`#{key.split(".").last}`")
    end
    assert_empty missing
    (commit + judgement + doc["settings"].keys + doc["subject"].keys).each { |key| assert_includes section, "`#{key}`" }
  end
end
