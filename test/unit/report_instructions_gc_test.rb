# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/report_store"

# The GC apart in the report (issue 31): a configuration whose every batch
# knows its GC's share is judged outside GC and says so in one line, its
# GC shown apart with its own ratio and cycles; issue 31's clusters (a
# major GC in some windows: 231k and 254k) are flagged on a figure with the
# GC in, and vanish from the figure outside GC while the GC's figure shows
# them; a configuration without the GC apart is judged with the GC in, and
# a comparison of the two uses the figure both have.
describe "the GC apart in the instructions report" do
  let(:dir) { Dir.mktmpdir("rackbench-report-gc") }
  after { FileUtils.rm_rf(dir) }

  # An instructions trial: +outside+ instructions per request outside GC,
  # +gc+ the GC's (nil: not known), +major+ major cycles in its window.
  def trial(dims, batch, outside, gc, major: 0)
    requests = 2000
    total = ((outside + gc.to_f) * requests).round
    gc_doc = { "cycles" => { "minor" => 7, "major" => major, "compactions" => 0 },
               "instructions" => gc && (gc * requests).round, "per_request" => gc, "named" => !gc.nil?,
               "source" => gc && "symbols", "major_by" => major.positive? ? ["oldmalloc"] : [], "processes" => [] }
    doc = { "tool" => "callgrind", "requests" => requests, "instructions" => total, "per_request" => total.fdiv(requests),
            "processes" => [], "functions" => [], "gc" => gc_doc,
            "outside_gc_per_request" => gc && outside, "quiet" => { "checks" => 3000, "waits" => 1000 } }
    engine = JSON.parse(JSON.generate(ReportStore::ENGINE_RESULT)).merge("rps" => 90.0, "requests" => requests)
    Rackbench::Trial::Record.new(key: "#{JSON.generate(dims)}#batch=#{batch}#instructions", batch: batch,
                                 position: batch * 10 + dims["ruby"].size, kind: "http", ruby: dims["ruby"],
                                 server: dims["server"], app: dims["app"], processes: 1, threads: 1, dims: dims,
                                 status: "ok", result: engine, load_settings: { "count" => 2000, "measure" => "instructions" },
                                 instructions: doc)
  end

  def report(rows, **options)
    Rackbench::Store.open(dir) do |store|
      id = store.find_or_create_experiment(name: "gc", fingerprint: "gc".ljust(64, "0"), seed: 1, batches: 5,
                                           source_text: nil, environment: { "warnings" => [] })
      rows.each do |dims, batches|
        batches.each_with_index { |(outside, gc, major), i| store.save_trial(id, trial(dims, i + 1, outside, gc, major: major || 0)) }
      end
      Rackbench::Report.new(store, **options)
    end
  end

  let(:a) { ReportStore.dims(ruby: "a") }
  let(:b) { ReportStore.dims(ruby: "bb") }
  # Issue 31's windows: about 220,000 outside GC, 11,000 of GC, and 21,000
  # more where a major GC fell in the window.
  let(:clustered) do
    [[220_010, 11_000], [219_990, 11_100], [220_020, 32_400, 1], [220_000, 32_300, 1], [219_980, 32_500, 1]]
  end

  it "judges outside GC, says so in one line, and shows the GC apart with its cycles and what set off the majors" do
    r = report({ a => clustered, b => clustered.map { |o, g, m| [o * 1.005, g, m] } })
    doc = r.config(r.configs.last.id).to_h["instructions"]
    assert_equal "outside_gc", doc["method"]
    assert_match(/\Aoutside Ruby's GC, shown apart below, since whether a GC cycle falls in a window/, doc["method_note"])
    assert_operator doc["per_request"]["cv"], :<, 0.001, "the majors move nothing outside GC"
    assert_equal "slower", doc.dig("against_baseline", "verdict"), "0.5% more work outside GC"
    assert_equal "outside_gc", doc.dig("against_baseline", "method")
    assert_in_delta 32_300, doc.dig("gc", "per_request", "median"), 1
    assert_in_delta 3.5, doc.dig("gc", "cycles_per_1000", "minor"), 1e-9
    assert_equal ["oldmalloc"], doc.dig("gc", "major_by")
    assert_operator doc.dig("total_per_request", "cv"), :>, 0.04, "with the GC in, issue 31's clusters"
    assert_in_delta 0.5, doc.dig("gate", "waits_per_request"), 1e-9
    kinds = r.config(r.configs.last.id).to_h["flags"].map { |f| f["kind"] }
    assert_includes kinds, "gc_majors"
    refute_includes kinds, "clusters", "the figure outside GC is not clustered"
    text = Rackbench::Report::Terminal.new(r).render
    assert_includes text, "Figure: outside Ruby's GC"
    assert_includes text, "Ruby's GC inside the windows (apart from the figure above)"
    assert_includes text, "Major GC cycles inside the windows were set off by: oldmalloc."
  end

  it "judges with the GC in, says why, flags the clusters, and compares two methods on the figure both have" do
    r = report({ a => clustered, b => clustered.map { |o, g, m| [o, nil, m].tap { |row| row[0] = o + g } } })
    unknown = r.config(r.configs.last.id).to_h["instructions"]
    assert_equal "total", unknown["method"]
    assert_match(/including Ruby's GC, which could not be told apart \(this ruby names none of its GC's functions/,
                 unknown["method_note"])
    assert_includes r.config(r.configs.last.id).to_h["flags"].map { |f| f["kind"] }, "clusters"
    assert_equal "total", unknown.dig("against_baseline", "method")
    assert_equal "no difference detected", unknown.dig("against_baseline", "verdict")
    assert_nil unknown.dig("gc", "per_request")
  end

  it "tells two clusters from one batch out of line" do
    flags = Rackbench::Report::InstructionsFlags
    assert_equal [[230_914, 231_945], [253_000, 254_548, 257_386]], flags.clusters([231_945, 230_914, 253_000, 254_548, 257_386])
    assert_nil flags.clusters([254_725, 230_885, 254_038, 256_252, 254_990]), "one batch apart: an outlier"
    assert_nil flags.clusters([230_509, 230_371, 231_936, 230_401, 230_940])
  end
end
