# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require_relative "../support/report_store"

# `rackbench history` over stored records: six labelled runs of one
# experiment on one machine, the 4th of which adds a slowdown, and between
# the 2nd and the 3rd a run on another, faster machine. The change point
# is the 4th run, named by its revision; the other machine's run is kept
# out of the series and said so. Real runs:
# test/integration/ci_workflow_test.rb.
describe "rackbench history" do
  let(:root) { Dir.mktmpdir("rackbench-history") }
  let(:dir) { File.join(root, "results") }
  after { FileUtils.rm_rf(root) }

  MACHINE_A = { "hostname" => "ci-1", "arch" => "x86_64", "cpu_model" => "Xeon E5", "cpu_count" => 2,
                "memory_total_bytes" => 24 * 1024**3, "kernel" => "6.1.0", "warnings" => [] }.freeze

  COMMITS = %w[1111111111 2222222222 3333333333 4444444444 5555555555 6666666666].freeze

  def revision(i)
    { "of" => "app", "name" => "own", "commit" => COMMITS[i] * 4, "committed_at" => "2026-11-2#{i}T10:00:00+00:00",
      "subject" => i == 3 ? "Burn 300 us per request" : "Change #{i + 1}", "dirty" => false }
  end

  def dims(threads) = ReportStore.dims(ruby: "ruby", threads: threads)

  # Run i: 1000 req/s with 1 thread and 4000 with 4 (1.5% noise), 10%
  # slower from the 4th run on with 1 thread only; between the 2nd and
  # the 3rd (experiment id 3), 50% faster on fast-box.
  before do
    Rackbench::Store.open(dir) do |store|
      6.times do |i|
        slow = i >= 3 ? 0.9 : 1.0
        labels = Rackbench::Labels.new(given: { "branch" => "main" }, revisions: [revision(i)])
        ReportStore.fill(store, { dims(1) => ReportStore.noisy(1000 * slow, 0.015, 6, 10 + i),
                                  dims(4) => ReportStore.noisy(4000, 0.015, 6, 20 + i) },
                         name: "bench", labels: labels, environment: MACHINE_A)
        next unless i == 1

        other = Rackbench::Labels.new(given: { "branch" => "main" }, revisions: [revision(1).merge("commit" => "7" * 40)])
        ReportStore.fill(store, { dims(1) => ReportStore.noisy(1500, 0.015, 6, 30),
                                  dims(4) => ReportStore.noisy(6000, 0.015, 6, 31) },
                         name: "bench", labels: other, environment: MACHINE_A.merge("hostname" => "fast-box"))
      end
    end
  end

  def history(*argv) = cli("history", "--results", dir, *argv)

  let(:doc) { JSON.parse(history("--json")[1]) }

  it "marks the 4th run as the change point and names its revision" do
    slow = doc["configs"].find { |c| c["label"] == "threads=1" }
    assert_equal [3], slow["change_points"].map { |c| c["run"] }
    change = slow["change_points"].first
    assert_equal [[0, 1, 2], "down"], change.values_at("band_runs", "direction")
    assert_in_delta(-0.10, change["change"], 0.02)
    assert_equal ["app own #{"3" * 10} → #{"4" * 10} \"Burn 300 us per request\""], change["changes"]
    assert_equal "branch=main; app own #{"4" * 10}", change["revision"]
    assert_empty doc["configs"].find { |c| c["label"] == "threads=4" }["change_points"], "4 threads did not change"
    assert_equal 6, slow["points"].size
    assert(slow["points"].all? { |p| p["ci"] && p["batches"] == 6 })
  end

  it "keeps the run of another machine out of the series, and says so" do
    assert_equal 6, doc["runs"].size
    assert_equal [1, 2, 4, 5, 6, 7], doc["runs"].map { |r| r["experiment_id"] }
    assert_equal [[3, ["hostname: \"ci-1\" vs \"fast-box\""]]], doc["apart"].map { |a| a.values_at("experiment_id", "differences") }
    code, out, = history("--wide") # the heading and the change point's line whole
    assert_equal 0, code
    assert_match(/\AHistory of bench: requests\/s per configuration over 6 runs, in order of date, on ci-1 \(Xeon E5, 2 CPUs, x86_64, 24 GiB, Linux 6\.1\.0\)$/, out)
    assert_match(/^Change point at run 4 \(experiment id 5\) of threads=1: requests\/s −\d+\.\d% against runs 1-3 \(band \d+–\d+\); app own 3333333333 → 4444444444 "Burn 300 us per request"$/, out)
    assert_match(/^\|\s+4 \|\s+9\d\d \|\s+\d+–\d+ \|\s+6 \| ◀ change −\d+\.\d% \|$/, out)
    assert_match(/^Left out of the series: 1 run on another machine .*\n  experiment id 3 .* on fast-box \(.*\): hostname: "ci-1" vs "fast-box"\. /, out)
  end

  it "draws the series of the machine asked for, the others apart" do
    code, out, = history("--machine", "fast-box", "--config", "threads=1")
    assert_equal 0, code
    assert_match(/over 1 run, in order of date, on fast-box/, out)
    assert_match(/^Left out of the series: 6 runs on another machine/, out)
    assert_match(/no run on 'nowhere' \(machines: ci-1, fast-box\)/, history("--machine", "nowhere")[2])
  end

  it "orders by revision, takes another figure, and writes one HTML page" do
    html = File.join(root, "history.html")
    code, out, = history("--order", "revision", "--figure", "p99", "--where", "branch=main", "--html", html)
    assert_equal 0, code
    assert_match(/^HTML history: #{Regexp.escape(html)}$/, out)
    page = File.read(html)
    assert_includes page, "<h1>History: bench</h1>"
    refute_match(/<script[^>]+src=|<link[^>]+href=["']?http/, page, "nothing fetched from the network")
    specs = page.scan(%r{<script type="application/json" id="spec-history-\d+">(.*?)</script>}m).map { |(s)| JSON.parse(s) }
    assert_equal 2, specs.size
    assert_equal ["run", "change point"], specs.first["layer"].last["encoding"]["color"]["scale"]["domain"]
  end

  it "refuses what it cannot draw, in one line" do
    [[["--figure", "speed"], /unknown figure 'speed'/], [["--where", "branch=dev"], /no run of experiment 'bench' labelled branch=dev in /],
     [["--config", "threads=2"], /no configuration matches 'threads=2'/],
     [["--experiment", "other"], /no run of experiment 'other'/], [["--order", "size"], /invalid argument: --order size/]]
      .each do |argv, message|
      code, _, err = history(*argv)
      assert_equal Rackbench::CLI::EXIT_USAGE, code
      assert_match message, err
    end
  end
end
