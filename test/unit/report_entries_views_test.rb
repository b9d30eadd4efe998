# frozen_string_literal: true

require "test_helper"
require "csv"
require "json"
require "stringio"
require_relative "../support/entry_results"

# The per-entry results of a request list in every view: the terminal's
# Pages section, the HTML page's chart and tables, the pages CSV and
# compare; and none of them when no configuration ran a request list.
describe "per-page results in the report views" do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  def latencies(n, from, step)
    Array.new(n) { |i| from + i * step }
  end

  # A batch of a three-entry mix: a login (first), an unnamed page whose
  # transport errors include a kind this rackbench does not know, a list.
  # :slow multiplies the unnamed page's latency.
  def batch(k = 0, slow: 1, list_name: "list", warmup: nil)
    EntryResults.result([
      EntryResults.entry(0, "login", latencies(10 + k, 900_000, 1_000), first: true, warmup: warmup),
      EntryResults.entry(1, nil, latencies(30 + k, 200_000 * slow, 3_000), errors: { "tls" => 3 }),
      EntryResults.entry(2, list_name, latencies(60 + k, 50_000, 500), weight: 6)
    ])
  end

  let(:puma) { ReportStore.dims(ruby: "a") }
  let(:falcon) { ReportStore.dims(ruby: "a", server: "falcon") }
  let(:mix) do
    EntryResults.report(dir, { puma => (0..4).map { |k| batch(k) }, falcon => (0..4).map { |k| batch(k, slow: 4) } })
  end
  let(:plain) do
    EntryResults.report(dir, { puma => [EntryResults.result(nil)] * 5, falcon => [EntryResults.result(nil)] * 5 })
  end

  describe "the terminal" do
    it "shows a Pages table per configuration, one row per entry, within 100 columns" do
      text = Rackbench::Report::Terminal.new(mix).render
      pages = text[/^Pages \(request-list entries.*?(?=^Flags)/m]
      refute_nil pages, text
      assert_equal 2, pages.scan(/^\| page +\| share \| req\/s \| 95% CI \| p50 +\| p99 +\| failed +\|$/).size
      assert_match(/^\| login \(first\) +\| 11\.3% \|/, pages, "66 of 585 responses")
      assert_match(/^\| #1 +\| 30\.2% \| .*\| tls: 15 +\|$/, pages, "the unknown error kind, summed")
      assert_match(/^\| list +\| 58\.5% \|/, pages)
      pages.lines.each { |line| assert_operator line.chomp.size, :<=, 100, line }
      assert_match(/^  puma: page #1: 15 of 175 requests failed \(tls: 15, limit 1%\)$/, text)
      assert_match(/\| +p \|$/, text.lines.grep(/^\| puma /).first.chomp, "the flags column marks page errors")
      assert_match(/^Flags \(.*, p page errors\):$/, text)
    end

    it "shows a login that failed in the warmup on its own row" do
      failing = { "requests" => 4, "status" => { "422" => 4 }, "errors" => {} }
      r = EntryResults.report(dir, { puma => [batch(warmup: failing), batch] })
      text = Rackbench::Report::Terminal.new(r).render
      assert_match(/^\| login \(first\) +\|.*\| warmup 4 of 14 \(422: 4\) +\|$/, text)
      assert_match(/^  a: page login: 4 of 14 warmup requests failed \(422: 4\)$/, text)
    end

    it "says where a login went that the windows never saw, and nothing for one they measured" do
      session = EntryResults.result([
        EntryResults.entry(0, "login", [], first: true, weight: 0,
                                           warmup: { "requests" => 2, "status" => { "200" => 2 }, "errors" => {} }),
        EntryResults.entry(1, "home", latencies(50, 100_000, 1_000))
      ])
      text = Rackbench::Report::Terminal.new(EntryResults.report(dir, { puma => [session, session] })).render
      assert_match(/^\| login \(first\) +\| +0\.0% \| +0\.0 \| +- \| +- \| +- \| +\|$/, text)
      assert_includes text, "\n  login: sent in the warmups only (4 requests, none failed)\n"
      refute_match(/sent in the warmups only/, Rackbench::Report::Terminal.new(mix).render)
    end

    it "renders a report without request lists as before: no Pages section, no page flag" do
      text = Rackbench::Report::Terminal.new(plain).render
      refute_match(/Pages/, text)
      refute_match(/page errors?:/, text.lines.grep(/^  /).join)
      flagged = Rackbench::Report::Terminal.new(EntryResults.report(dir, { puma => [EntryResults.result(nil)] * 2 })).render
      assert_match(/^Flags \(.*b busy machine\):$/, flagged, "too few batches: the legend is shown")
      refute_match(/page errors/, flagged, "without a request list, page errors is not in it")
      assert_nil plain.configs.first.to_h["entries"]
    end
  end

  describe "the HTML page" do
    def render(report)
      Rackbench::HtmlReport.new(JSON.parse(JSON.generate(report.to_h))).render
    end

    it "has a table per configuration with a row per page, and a Vega-Lite chart of p50 and p99 per page" do
      html = render(mix)
      section = html[%r{<section id="pages">.*?</section>}m]
      refute_nil section
      assert_equal %w[puma falcon], section.scan(%r{<h3>(.*?)</h3>}).flatten
      tables = section.scan(%r{<table>.*?</table>}m)
      assert_equal 2, tables.size
      rows = tables.first.scan(%r{<tr><td>(.*?)</td>}).flatten
      assert_equal ["login (first)", "#1", "list"], rows
      assert_includes tables.first, "<td>tls: 15</td>"
      assert_includes html, %(<a href="#pages">Pages</a>)

      spec = JSON.parse(html[%r{<script type="application/json" id="spec-page-latency">(.*?)</script>}m, 1])
      values = spec["data"]["values"]
      assert_equal 2 * 2 * 3, values.size, "p50 and p99 of 3 pages of 2 configurations"
      assert_equal %w[config latency ms page percentile share], values.first.keys.sort
      assert_equal %w[puma falcon], spec["facet"]["row"]["sort"]
      assert_equal ["login (first)", "#1", "list"], spec["spec"]["layer"][1]["encoding"]["y"]["sort"]
      fields = spec["spec"]["layer"].flat_map { |l| l["encoding"].values.map { |e| e.is_a?(Hash) ? e["field"] : nil } }
      pivoted = %w[p50 p99]
      fields.compact.each { |f| assert(values.first.key?(f) || pivoted.include?(f), "#{f} is a field of the data") }
      slow = values.find { |v| v["config"] == "falcon" && v["page"] == "#1" && v["percentile"] == "p50" }
      fast = values.find { |v| v["config"] == "puma" && v["page"] == "#1" && v["percentile"] == "p50" }
      assert_operator slow["ms"], :>, 3 * fast["ms"], "the slow page stands out"
      assert_equal "log", spec["spec"]["layer"][1]["encoding"]["x"]["scale"]["type"]
    end

    it "has no Pages section, chart or link without a request list" do
      html = render(plain)
      refute_includes html, %(id="pages")
      refute_includes html, "page-latency"
      assert_equal Rackbench::HtmlReport::Charts.all.size, html.scan(/ data-chart /).size
    end
  end

  describe "CSV" do
    it "writes one row per entry of each configuration with --csv-pages, and leaves --csv as it was" do
      rows = CSV.parse(mix.to_csv_pages)
      head = rows.first
      assert_equal %w[config_id ruby server app processes threads entry_index entry_name entry_label], head.first(9)
      assert_equal 7, rows.size
      login = rows[1]
      assert_equal %w[0 login login true], login.values_at(6, 7, 8, 9)
      unnamed = rows[2]
      assert_equal [nil, "#1"], unnamed.values_at(7, 8)
      assert_equal "tls:15", unnamed[head.index("errors")]
      assert_equal "200:160", unnamed[head.index("status")]
      assert_equal mix.configs.first.entries[1].latency_us["p99"].to_s, unnamed[head.index("latency_p99_us")]
      # The configurations' CSV has the same columns whether or not a request list ran.
      assert_equal CSV.parse(plain.to_csv).first, CSV.parse(mix.to_csv).first
      assert_equal [head], CSV.parse(plain.to_csv_pages), "no request list: the header alone"
    end

    it "is printed by rackbench report --csv-pages" do
      results = File.join(dir, "cli")
      Rackbench::Store.open(results) { |store| EntryResults.fill(store, { puma => [batch, batch] }) }
      out = StringIO.new
      err = StringIO.new
      assert_equal 0, Rackbench::CLI.run(["report", "--results", results, "--csv-pages"], out: out, err: err)
      assert_equal 4, CSV.parse(out.string).size, err.string
      out = StringIO.new
      assert_equal 0, Rackbench::CLI.run(["report", "--results", results, "--json"], out: out, err: err)
      config = JSON.parse(out.string)["configs"][0]
      assert_equal ["login", "#1", "list"], config["entries"].map { |e| e["label"] }
      assert_equal ["#1"], config["flags"].select { |f| f["kind"] == "page_errors" }.map { |f| f["entry"] }
      out = StringIO.new
      assert_equal 0, Rackbench::CLI.run(["report", "--results", results, "--json", "--max-error-rate", "10%"],
                                         out: out, err: err)
      doc = JSON.parse(out.string)
      assert_equal 0.1, doc["settings"]["max_error_rate"]
      assert_empty doc["configs"][0]["flags"].select { |f| f["kind"] == "page_errors" }, "3 of 63 is under 10%"
      err = StringIO.new
      assert_equal 2, Rackbench::CLI.run(["report", "--results", results, "--max-error-rate", "150%"], out: out, err: err)
      assert_equal "rackbench: max_error_rate must be a number in 0.0..1.0, got 1.5\n", err.string
    end
  end

  describe "compare" do
    it "compares the pages both sides have, and lists those one side only has" do
      r = EntryResults.report(dir, { puma => (0..4).map { |k| batch(k) },
                                     falcon => (0..4).map { |k| batch(k * 2, slow: 4, list_name: "index") } })
      compare = Rackbench::Report::Compare.configurations(r, "server=puma", "server=falcon")
      entries = compare.to_a.first["entries"]
      assert_equal ["login", "#1"], entries["pairs"].map { |p| p["label"] }
      assert_equal [["list"], ["index"]], [entries["only_a"], entries["only_b"]]
      login = entries["pairs"].first
      a, b = r.configs.map { |c| c.entries.first }
      expected = Rackbench::Stats.compare(a.rps_values, b.rps_values, **r.options.compare_options)
      assert_equal [expected.ratio, expected.ratio_ci, expected.verdict], login.values_at("ratio", "ratio_ci95", "verdict")
      assert_operator entries["pairs"][1]["p50_ratio"], :>, 3, "B's unnamed page is about 4 times slower"
      text = compare.terminal_table
      assert_match(/^\| page +\| A req\/s \| B req\/s \| ratio \| 95% CI +\| verdict +\| p99 B\/A \|$/, text)
      assert_match(/^\| #1 +\|.*\| +[34]\.\d\d \|$/, text)
      assert_includes text, "  only in A (all): list\n"
      assert_includes text, "  only in B (all): index\n"
      pages = text[/^\+-+\+\n\| +Pages of.*?(?=^  only)/m]
      refute_nil pages
      pages.lines.each { |line| assert_operator line.chomp.size, :<=, 100, line }
    end

    it "has no pages without a request list" do
      compare = Rackbench::Report::Compare.configurations(plain, "server=puma", "server=falcon")
      assert_nil compare.to_a.first["entries"]
      refute_match(/Pages of/, compare.terminal_table)
    end
  end
end
