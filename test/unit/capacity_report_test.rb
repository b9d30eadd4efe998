# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/capacity_support"

# The answer per configuration (Summary), its table and its page, from
# searches run over fake step functions.
describe Rackbench::Capacity::Summary do
  include Rackbench::Test::CapacitySupport

  let(:experiment) do
    Rackbench::Experiment.parse(<<~YAML, source: "report.yml")
      name: cap-report
      seed: 4
      batches: 3
      servers: [puma, webrick]
      apps: [rack-hello]
      capacity: { p99: 50ms, start_rate: 100, resolution: 5%, confirmations: 1 }
    YAML
  end

  # Searches whose ceiling is +ceilings+[config label][batch - 1]; the
  # step at +invalid_rate+ is invalid once.
  def jobs(ceilings, invalid_rate: nil)
    seen_invalid = false
    Rackbench::Capacity::Driver.new(experiment, steps: nil).jobs.each do |job|
      step = ceiling_steps(ceilings.fetch(job.config.server.label)[job.batch - 1])
      search = job.search
      while (ask = search.next_ask)
        if ask.rate == invalid_rate && !seen_invalid && job.config.server.label == "puma"
          seen_invalid = true
          search.record(verdict(:invalid))
        else
          search.record(step.call(ask))
        end
      end
    end
  end

  let(:summary) { Rackbench::Capacity::Summary.new(experiment, jobs({ "puma" => [380, 400, 390], "webrick" => [0, 0, 0] }, invalid_rate: 400)) }
  let(:doc) { summary.to_h }
  let(:puma) { doc["configs"].find { |c| c["label"].start_with?("puma") } }
  let(:webrick) { doc["configs"].find { |c| c["label"].start_with?("webrick") } }

  it "answers with the median over batches, its bootstrap interval, the resolution and requests per day" do
    rates = puma["searches"].map { |s| s["capacity_rps"] }
    assert_equal 3, rates.size
    assert_equal rates.sort[1].to_f, puma["capacity_rps"]
    low, high = puma["interval_rps"]
    assert_operator low, :<=, puma["capacity_rps"]
    assert_operator high, :>=, puma["capacity_rps"]
    assert_equal Rackbench::Stats.bootstrap_ci(rates.map(&:to_f), seed: 4), puma["interval_rps"]
    assert_equal puma["searches"].map { |s| s["resolution_rps"] }.max, puma["resolution_rps"]
    assert_equal (puma["capacity_rps"] * 86_400).round, puma["requests_per_day"]
    assert_in_delta 10_000.0, puma["latency_us"]["p99"], 0.001, "the p99 of the passing steps at the answer"
    assert_equal puma["searches"].sum { |s| s["steps"].size }, puma["steps_run"]
    assert_equal 1, puma["invalid_steps"]
    assert_equal "puma rack-hello 1x1", puma["label"]
  end

  it "gives no answer where no search found one, and says why" do
    assert_nil webrick["capacity_rps"]
    assert_nil webrick["interval_rps"]
    assert_nil webrick["requests_per_day"]
    assert(webrick["searches"].all? { |s| s["status"] == "none" })
  end

  it "is a JSON document with every step's verdict and figures" do
    parsed = JSON.parse(JSON.generate(doc))
    assert_equal ["rackbench-capacity", 1], parsed.values_at("format", "format_version")
    assert_equal experiment.fingerprint, parsed["experiment"]["fingerprint"]
    assert_equal "p99", parsed["settings"]["percentile"]
    step = parsed["configs"].first["searches"].first["steps"].first
    assert_equal %w[error_ratio index late_fraction latency_us offered_rps phase rate reason sent_rps status unsent],
                 step.keys.sort
    invalid = puma["searches"].flat_map { |s| s["steps"] }.find { |s| s["status"] == "invalid" }
    assert_equal [400, "fake invalid"], invalid.values_at("rate", "reason")
  end

  it "prints a table with the answers, and a line for every invalid step and every search without an answer" do
    text = Rackbench::Capacity::Table.render(doc)
    assert_match(/Capacity: p99 <= 50\.00ms, errors <= 0\.10%, 3 batches/, text)
    row = text.lines.find { |l| l.include?("puma rack-hello 1x1") }
    assert_includes row, Rackbench::Units.rate_rounded(puma["capacity_rps"])
    assert_includes row, Rackbench::Units.rate_grouped(puma["requests_per_day"])
    assert_match(/webrick rack-hello 1x1 \| +none \|/, text)
    assert_match(/puma rack-hello 1x1, batch \d: step \d+ at 400 req\/s INVALID \(not concluded from\): fake invalid/, text)
    assert_match(/webrick rack-hello 1x1, batch 1: p99 <= 50\.00ms fails even at 1 req\/s/, text)
  end

  it "marks a capped answer with ≥" do
    capped = Rackbench::Experiment.parse(experiment.source_text.sub("confirmations: 1", "confirmations: 0, max_rate: 200"),
                                         source: "report.yml")
    job = Rackbench::Capacity::Driver.new(capped, steps: nil).jobs.first
    job.search.record(verdict(:pass)) while job.search.next_ask
    row = Rackbench::Capacity::Table.row({ "label" => "x", "capacity_rps" => 200.0, "capped" => true, "latency_us" => {},
                                           "requests_per_day" => 17_280_000, "steps_run" => 2, "invalid_steps" => 0 })
    assert_equal "≥ 200", row[1]
    assert_equal :capped, job.search.result.status
  end

  it "draws the curve: p50/p95/p99 against the rate, invalid steps apart, the target and the answer as rules" do
    spec = Rackbench::HtmlReport::Charts.capacity_curve(puma, doc["settings"])
    lines, points, invalid, target, answer = spec[:layer]
    assert_equal "line", lines[:mark][:type]
    assert_equal %w[p50 p95 p99], lines[:data][:values].map { |r| r["percentile"] }.uniq.sort
    refute(points[:data][:values].any? { |p| p["status"] == "invalid" }, "invalid steps are on no line")
    assert(invalid[:data][:values].all? { |p| p["status"] == "invalid" && p["rate"] == 400 })
    assert_equal ["cross"], invalid[:encoding][:shape][:scale][:range]
    assert_in_delta 50.0, target[:data][:values].first["ms"]
    assert_equal puma["capacity_rps"], answer[:data][:values].first["rate"]
    no_answer = Rackbench::HtmlReport::Charts.capacity_curve(webrick, doc["settings"])
    labels = no_answer[:layer].flat_map { |layer| Array(layer.dig(:data, :values)).map { |v| v["label"] } }.compact
    assert_equal ["target p99 50.00ms"], labels, "no answer, no answer rule (and no invalid step)"
  end

  it "writes one self-contained page with a chart per configuration" do
    Dir.mktmpdir("rackbench-capacity-page") do |dir|
      path = Rackbench::Capacity::HtmlPage.new(doc).write(dir)
      html = File.read(path)
      assert_equal File.join(dir, "capacity.html"), path
      assert_includes html, %(id="chart-capacity-1")
      assert_includes html, %(id="chart-capacity-2")
      assert_includes html, Rackbench::HtmlReport::Page::CONTENT_SECURITY_POLICY
      refute_match(%r{<script[^>]+src=}, html, "no script is fetched")
      assert_includes html, "INVALID (not concluded from)"
    end
  end
end

describe "the capacity document's contract (doc/output.md)" do
  include Rackbench::Test::CapacitySupport

  it "documents every key the document has, and the document has every documented key" do
    experiment = Rackbench::Experiment.parse(<<~YAML, source: "contract.yml")
      name: cap-contract
      servers: [puma]
      apps: [rack-hello]
      capacity: { p99: 50ms, confirmations: 0 }
    YAML
    jobs = Rackbench::Capacity::Driver.new(experiment, steps: nil).jobs
    jobs.each { |job| job.search.record(ceiling_steps(300).call(job.search.next_ask)) while job.search.next_ask }
    doc = JSON.parse(JSON.generate(Rackbench::Capacity::Summary.new(experiment, jobs).to_h))
    text = File.read(File.expand_path("../../doc/output.md", __dir__))[/^## The capacity document.*?(?=^## )/m]
    config = doc["configs"].first
    search = config["searches"].first
    # the names in the first cell of each row of the section's table
    names = text.scan(/^\| (.+?) \|/).flatten.flat_map { |cell| cell.scan(/`([^`]+)`/).flatten }
    { "" => doc, "configs." => config, "searches." => search, "steps." => search["steps"].first }.each do |prefix, object|
      documented = names.select { |n| prefix.empty? ? !n.include?(".") : n.start_with?(prefix) }
                        .map { |n| n.delete_prefix(prefix) }.uniq
      assert_equal documented.sort, object.keys.sort, "keys of #{prefix.empty? ? "the document" : prefix}"
    end
  end
end
