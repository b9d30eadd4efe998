# frozen_string_literal: true

require "test_helper"
require "csv"
require "json"
require_relative "../support/report_store"

# Instructions per request in the report (Report::InstructionsSummary and
# its views): instructions trials count in no time figure; each
# configuration's count has its median, interval, CV and a verdict against
# the baseline in the words of time (fewer instructions: faster); the
# terminal, CSV, JSON and HTML show it, the time verdict beside it when
# both were measured; an experiment of instructions only reads as one.
describe "instructions per request in the report" do
  let(:dir) { Dir.mktmpdir("rackbench-report-instructions") }
  after { FileUtils.rm_rf(dir) }

  # An instructions trial of +dims+ in +batch+ counting +per_request+ over
  # 2,000 requests, in a master and a worker.
  def instructions_trial(dims, batch, position, per_request)
    total = (per_request * 2000).round
    doc = { "tool" => "callgrind", "valgrind" => "3.19.0", "requests" => 2000, "instructions" => total,
            "per_request" => total / 2000.0,
            "processes" => [{ "pid" => 1, "role" => "main", "program" => "ruby3.1 puma", "instructions" => total / 10,
                              "per_request" => total / 10 / 2000.0 },
                            { "pid" => 2, "role" => "worker", "program" => "ruby3.1 puma",
                              "instructions" => total - total / 10, "per_request" => (total - total / 10) / 2000.0 }],
            "functions" => [{ "object" => "libruby.so", "name" => "vm_exec_core", "instructions" => total / 2,
                              "per_request" => total / 4000.0 },
                            { "object" => "libc.so.6", "name" => "malloc", "instructions" => total / 4,
                              "per_request" => total / 8000.0 }] }
    engine = JSON.parse(JSON.generate(ReportStore::ENGINE_RESULT)).merge("rps" => 90.0, "requests" => 2000)
    Rackbench::Trial::Record.new(key: "#{JSON.generate(dims)}#batch=#{batch}#instructions", batch: batch,
                                 position: position, kind: "http", ruby: dims["ruby"], server: dims["server"],
                                 app: dims["app"], processes: 1, threads: 4, dims: dims, status: "ok", result: engine,
                                 load_settings: { "count" => 2000, "measure" => "instructions" }, instructions: doc)
  end

  # +time+: { dims => [rps...] } time trials; +counts+: { dims => [per_request...] };
  # +options+: the Report's (baseline:, ...).
  def report(time: {}, counts: {}, failed: [], **options)
    @reports = @reports.to_i + 1
    Rackbench::Store.open(File.join(dir, @reports.to_s)) do |store|
      id = time.empty? ? nil : ReportStore.fill(store, time)
      id ||= store.find_or_create_experiment(name: "synthetic", fingerprint: "synthetic".ljust(64, "0"), seed: 1,
                                              batches: 10, source_text: nil, environment: { "warnings" => [] })
      position = 100
      counts.each do |dims, values|
        values.each_with_index { |v, i| store.save_trial(id, instructions_trial(dims, i + 1, position += 1, v)) }
      end
      failed.each do |dims|
        trial = instructions_trial(dims, 99, position += 1, 1)
        store.save_trial(id, trial.with(status: "failed", reason: "valgrind: the server did not answer", instructions: nil))
      end
      Rackbench::Report.new(store, **options)
    end
  end

  let(:a) { ReportStore.dims(ruby: "a") }
  let(:b) { ReportStore.dims(ruby: "b") }
  let(:plain) { [200_000, 200_100, 199_950, 200_050, 200_020] }

  it "keeps instructions trials out of every time figure and judges fewer instructions faster" do
    r = report(time: { a => [1000, 1010, 990, 1005, 995], b => [1000, 1010, 990, 1005, 995] },
               counts: { a => plain, b => plain.map { |v| v * 1.01 } })
    config = r.config(r.configs.last.id)
    assert_equal [5, 0], [config.batches, config.failed], "time batches only"
    assert_equal [1000, 1010, 990, 1005, 995].sort, config.rps_values.sort, "valgrind's 90 req/s counts nowhere"
    doc = config.to_h["instructions"]
    assert_equal 5, doc["batches"]
    assert_in_delta 202_020, doc["per_request"]["median"], 1
    assert_operator doc["per_request"]["cv"], :<, 0.001
    assert_equal "slower", doc.dig("against_baseline", "verdict"), "1% more instructions per request"
    assert_in_delta 1.01, doc.dig("against_baseline", "ratio"), 1e-6
    assert_match(/above 1: more instructions per request/, doc.dig("against_baseline", "explanation"))
    assert_equal "no difference detected", config.verdict, "the time verdict stands apart"
    assert_equal [%w[worker ruby3.1\ puma], %w[main ruby3.1\ puma]], doc["processes"].map { |p| p.values_at("role", "program") }
    assert_equal %w[vm_exec_core malloc], doc["functions"].map { |f| f["name"] }
    assert_in_delta 0.5, doc["functions"].first["share"], 1e-3

    faster = report(counts: { a => plain, b => plain.map { |v| v * 0.99 } })
    assert_equal "faster", faster.configs.last.to_h.dig("instructions", "against_baseline", "verdict")
  end

  it "judges instructions with a band of their own: 0.5% more is slower, unless the band says it is negligible" do
    counts = { a => plain, b => plain.map { |v| v * 1.005 } }
    assert_equal "slower", report(counts: counts).configs.last.to_h.dig("instructions", "against_baseline", "verdict")
    @reports = @reports.to_i + 1
    wide = Rackbench::Store.open(File.join(dir, @reports.to_s)) do |store|
      id = store.find_or_create_experiment(name: "wide", fingerprint: "wide".ljust(64, "0"), seed: 1, batches: 5,
                                           source_text: nil, environment: { "warnings" => [] })
      position = 0
      counts.each do |dims, values|
        values.each_with_index { |v, i| store.save_trial(id, instructions_trial(dims, i + 1, position += 1, v)) }
      end
      Rackbench::Report.new(store, instructions_equivalence: 0.01)
    end
    assert_equal "no difference detected", wide.configs.last.to_h.dig("instructions", "against_baseline", "verdict")
    assert_equal 0.01, wide.to_h.dig("settings", "instructions_equivalence")
  end

  it "gates on instructions per request with their own band, and cannot say when an instructions trial failed" do
    gate = lambda do |r, text|
      Rackbench::Gate.within(r, rules: Rackbench::Gate::Rule.parse_all([text]))
    end
    slower = report(counts: { a => plain, b => plain.map { |v| v * 1.005 } }, baseline: "ruby=a")
    # Inside time's ±1% band this 0.5% would be "no difference detected",
    # and no limit could catch it; the instructions' ±0.1% band lets it.
    result = gate.call(slower, "instructions>0.2%")
    assert_equal Rackbench::Gate::REGRESSED, result.status
    check = result.results.first.checks.first
    assert_equal ["instructions per request", "worse"], [check.rule.figure.words, check.verdict]
    assert_in_delta 1.005, check.ratio, 1e-6
    within = gate.call(slower, "instructions_per_request>1%")
    assert_equal Rackbench::Gate::OK, within.status
    assert_match(/worse, within the 1% limit/, within.results.first.checks.first.explanation)

    same = report(counts: { a => plain, b => plain.reverse }, baseline: "ruby=a")
    assert_equal Rackbench::Gate::OK, gate.call(same, "instructions>0.2%").status

    broken = report(counts: { a => plain, b => plain }, failed: [b], baseline: "ruby=a")
    result = gate.call(broken, "instructions>0.2%")
    assert_equal Rackbench::Gate::CANNOT_SAY, result.status
    assert_includes result.results.first.problems.first, "1 failed trial on the candidate side: valgrind"
  end

  it "shows both verdicts side by side in the terminal, the CSV and the page" do
    r = report(time: { a => [1000, 1010, 990, 1005, 995], b => [1100, 1110, 1090, 1105, 1095] },
               counts: { a => plain, b => plain.map { |v| v * 1.01 } })
    text = r.terminal_table
    section = text[/Instructions per request \(callgrind.*?(?=\n[A-Z]|\z)/m]
    refute_nil section
    assert_match(/req\/s ratio \| time verdict/, section)
    row = section.lines.find { |l| l.start_with?("| b ") }
    assert_match(/202,020 .* slower .* faster/, row, "more instructions, yet more req/s: they disagree")
    csv = CSV.parse(r.to_csv, headers: true)
    assert_equal %w[slower], csv.map { |line| line["instructions_verdict"] }.compact
    assert_in_delta 1.01, csv[1]["instructions_ratio"].to_f, 1e-6
    html = File.join(dir, "report.html")
    r.write_html(html)
    page = File.read(html)
    assert_includes page, %(<section id="instructions">)
    assert_includes page, "vm_exec_core"
    assert_includes page, "time verdict"
  end

  it "reads an experiment of instructions only as one: no time table, too few batches flagged on its own count" do
    r = report(counts: { a => plain, b => plain.first(3) })
    text = r.terminal_table
    refute_match(/Median req\/s/, text)
    assert_match(/Instructions per request/, text)
    refute_match(/time verdict/, text)
    flags = r.configs.last.flags
    assert_equal ["3 ok instructions batch(es): an interval and a verdict need 5"], flags.map { |f| f["message"] }
    assert_empty r.configs.first.flags
  end

  it "flags an instructions batch far out of line (a major GC in one window only), and a CV above 0.5%" do
    r = report(counts: { a => plain + [200_010, 209_000] })
    assert_equal %w[outlier high_variance], r.configs.first.flags.map { |f| f["kind"] }
    assert_match(/CV 1\.\d\d% > 0\.5%/, r.configs.first.flags.last["message"])
    assert_match(/batch 7: 209,000 instructions per request/, r.configs.first.flags.first["message"])
  end
end
