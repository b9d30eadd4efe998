# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/nightly_history"
require_relative "../support/headless_chromium"

# The published site in headless Chromium, cut off from the network:
# every page kind (the index, the regressions, a testbed, a timeline, a
# regression, the comparison of two runs) loads from disk with no error,
# no warning, no console output and no blocked request, draws every chart
# it holds, and the comparison page fills its table from the two runs'
# data files. The site is a real publish of 300 simulated nights
# (test/support/nightly_history.rb: its three steps, the revert, and one
# night whose build failed). Screenshots of the index, a timeline and a
# regression page are written to doc/screenshots/ (the README and
# doc/publish.md show them).
describe "the published site in headless Chromium (integration)" do
  ROOT = File.expand_path("../..", __dir__)
  SCREENSHOTS = File.join(ROOT, "doc/screenshots")
  NIGHTS = 300

  def self.site
    @site ||= new("setup").send(:publish_nights)
  end

  Minitest.after_run { FileUtils.rm_rf(@site[:dir]) if @site }

  before do
    unless HeadlessChromium.binary
      message = "chromium is not installed (bin/setup installs it; or apt-get install chromium)"
      ENV["CI"] ? flunk(message) : skip(message)
    end
    FileUtils.mkdir_p(SCREENSHOTS)
  end

  let(:site) { self.class.site }

  def publish_nights
    dir = Dir.mktmpdir("rackbench-site")
    results = File.join(dir, "results")
    Rackbench::Store.open(results) do |store|
      NightlyHistory.fill(store, nights: 0...250)
      failed = File.join(dir, "nightly.yml")
      File.write(failed, "name: #{NightlyHistory::EXPERIMENT}\nbatches: 10\nservers: [puma]\napps: [rack-hello]\n")
      id = Rackbench::Publish::FailedRun.record(store, failed, given: { "branch" => "master" },
                                                               reason: "make failed (exit status 2): compile.c:123: error",
                                                               environment: NightlyHistory::MACHINE)
      store.db[:experiments].where(id: id).update(created_at: NightlyHistory::START + 250.5 * 86_400)
      NightlyHistory.fill(store, nights: 251...NIGHTS)
    end
    out = File.join(dir, "site")
    Rackbench::Store.open(results) { |store| Rackbench::Publish.run(store, out: out) }
    index = JSON.parse(File.read(File.join(out, "data/index.json")))
    slug = index["testbeds"].first["slug"]
    regression = index["regressions"].find { |r| r["figure"] == "cpu" && r["state"] == "fixed" } || index["regressions"].first
    { dir: dir, out: out, slug: slug, index: index, regression: regression }
  end

  def path(relative) = File.join(site[:out], relative)

  def assert_clean(status, dom, stderr, charts:)
    assert_equal [], status["errors"], "errors in the page"
    assert_equal [], status["warnings"], "warnings in the page"
    assert_equal charts, status["charts"]
    assert_equal charts, status["rendered"].size, "every chart drew an SVG"
    assert_equal [], stderr.lines.grep(/:CONSOLE/), "console output"
    refute_match(/<img\b/, dom.gsub(%r{<script\b.*?</script>}m, ""))
  end

  it "loads the index, the regressions and the testbed page cleanly" do
    %w[index.html regressions/index.html].each { |page| assert_clean(*HeadlessChromium.open(path(page)), charts: 0) }
    status, dom, stderr = HeadlessChromium.open(path("#{site[:slug]}/index.html"))
    assert_clean(status, dom, stderr, charts: 0)
    assert_includes dom, "make failed (exit status 2)"
    HeadlessChromium.screenshot(path("index.html"), File.join(SCREENSHOTS, "publish-index.png"), height: 1100)
  end

  it "draws a timeline of 300 nights: each figure, its steps, the failed night" do
    config = site[:regression]["config_slug"]
    status, dom, stderr = HeadlessChromium.open(path("#{site[:slug]}/#{config}.html"))
    assert_clean(status, dom, stderr, charts: 4)
    assert_includes dom, "regression ##{site[:regression]["id"]}"
    HeadlessChromium.screenshot(path("#{site[:slug]}/#{config}.html"), File.join(SCREENSHOTS, "publish-timeline.png"),
                                height: 1900)
  end

  it "draws a regression page: its range, the series around it, its events" do
    status, dom, stderr = HeadlessChromium.open(path("regressions/#{site[:regression]["id"]}.html"))
    assert_clean(status, dom, stderr, charts: 1)
    assert_includes dom, "last good run"
    HeadlessChromium.screenshot(path("regressions/#{site[:regression]["id"]}.html"),
                                File.join(SCREENSHOTS, "publish-regression.png"), height: 1300)
  end

  it "compares two runs from their data files, as the address asks" do
    status, dom, stderr = HeadlessChromium.open(path("#{site[:slug]}/compare.html"), fragment: "#a=100&b=160")
    assert_clean(status, dom, stderr, charts: 0)
    assert_equal 62, status["comparisons"], "every series both runs have"
    assert_equal %w[100 160], status["compared"]
    assert_match(/class="worse">worse</, dom, "night 159 is after the 5% slowdown of night 150")
  end
end
