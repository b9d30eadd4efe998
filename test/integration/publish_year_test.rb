# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "time"
require_relative "../support/nightly_history"

# A year of nightly runs in a simulation (test/support/nightly_history.rb:
# 365 nights of 20 configurations, per-series CV from 0.1% to 5%, three
# injected steps of 0.5%, 2% and 5%, the 2% one reverted 90 nights
# later), stored and published from scratch, then one more night
# published incrementally. Each step is found once in the series it
# mainly moved, at a commit range that holds its commit; the reverted one
# is fixed; every other regression in the year is explained by a step,
# but at most one. How long publishing takes is measured by
# bench/publish_speed.rb (doc/performance.md), not here.
describe "a year of nightly runs, published (integration)" do
  def self.outcome
    @outcome ||= new("setup").send(:publish_year)
  end

  Minitest.after_run { FileUtils.rm_rf(@outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }

  def publish(results, site)
    out = StringIO.new
    err = StringIO.new
    code = Rackbench::CLI.run(["publish", "--results", results, "--out", site, "--json"], out: out, err: err)
    raise "publish exited #{code}: #{err.string}" unless code.zero?

    JSON.parse(out.string)
  end

  def publish_year
    dir = Dir.mktmpdir("rackbench-year")
    results = File.join(dir, "results")
    site = File.join(dir, "site")
    Rackbench::Store.open(results) { |store| NightlyHistory.fill(store, nights: 0...NightlyHistory::NIGHTS) }
    year = publish(results, site)
    Rackbench::Store.open(results) { |store| NightlyHistory.fill(store, nights: NightlyHistory::NIGHTS..NightlyHistory::NIGHTS) }
    night = publish(results, site)
    regressions = Rackbench::Store.open(results) { |store| Rackbench::Regressions.new(store).all.map(&:to_h) }
    { dir: dir, site: site, year: year, night: night, regressions: regressions }
  end

  # The nights a regression's range spans: from the night after its last
  # good run to its last possible run.
  def nights(regression)
    range = regression["range"]
    first = range["good"] ? night(range["good"]) + 1 : 0
    first..night(range["bad"])
  end

  def night(run) = ((Time.parse(run["created_at"]) - NightlyHistory::START) / 86_400).round

  def config_id(step) = Rackbench::Report.config_id(NightlyHistory.configs[step.config].dims)

  it "publishes every series of the year" do
    assert_equal 365, outcome[:year]["summarised"]
    assert_equal 1, outcome[:year]["testbeds"]
    assert_equal 14 * 4 + 6, outcome[:year]["lines"], "rps, p99, cpu and memory of 14 configurations, instructions of 6"
  end

  it "finds each step once, in the series it moved most, at a range that holds its commit" do
    NightlyHistory.steps.each do |step|
      found = outcome[:regressions].select { |r| r["config_id"] == config_id(step) && r["figure"] == step.primary }
      assert_equal 1, found.size, "step of night #{step.night} in #{step.primary}: #{found.map { |r| r["range"]["bad"] }.inspect}"
      regression = found.first
      assert_includes nights(regression), step.night, "range #{nights(regression)}"
      assert_operator nights(regression).size, :<=, 5, "a range of a few nights at most"
      expected = step.reverted_at ? "fixed" : "confirmed"
      assert_equal expected, regression["state"], "step of night #{step.night}"
      assert_in_delta step.figures.fetch(step.primary), regression["change"], step.figures.fetch(step.primary).abs * 0.5
      next unless step.reverted_at

      # NightlyHistory stores night N as experiment id N + 1.
      fixed_night = regression["runs"]["fixed"] - 1
      assert_includes step.reverted_at..(step.reverted_at + 4), fixed_night, "fixed by the revert's step back"
    end
  end

  it "finds at most one regression in the whole year that no step explains" do
    explained = outcome[:regressions].select do |r|
      NightlyHistory.steps.any? do |step|
        r["config_id"] == config_id(step) && step.figures.key?(r["figure"]) && nights(r).cover?(step.night)
      end
    end
    unexplained = outcome[:regressions] - explained
    assert_operator unexplained.size, :<=, 1, JSON.pretty_generate(unexplained.map { |r| r.slice("id", "config_id", "figure", "change", "state", "range") })
    explained.group_by { |r| [r["config_id"], r["figure"]] }.each do |series, found|
      assert_equal found.size, found.map { |r| r["range"]["bad"]["experiment_id"] }.uniq.size, "#{series}: once per step"
    end
  end

  it "publishes one more night by rewriting only what shows it" do
    night = outcome[:night]
    assert_equal 1, night["summarised"]
    assert_empty night["created"], "no new regression"
    written = night["written"]
    runs = Dir[File.join(outcome[:site], "data/*/runs/*.json")]
    assert_equal 366, runs.size
    assert_equal 2, written.count { |path| path.match?(%r{\Adata/[^/]+/runs/}) }, "the new run's data (JSON and its script)"
    refute(written.any? { |path| path.start_with?("assets/") })
    assert_operator written.size, :<, night["written"].size + night["unchanged"].size
  end
end
