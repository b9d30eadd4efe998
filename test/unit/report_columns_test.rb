# frozen_string_literal: true

require "test_helper"
require "cgi"
require "csv"
require "json"
require_relative "../support/report_store"

# Report::Columns is the one definition of the configurations table: the
# JSON entries, the terminal table, CSV and the HTML configurations table
# are generated from it, so a column added there shows in every view it
# names, at its place, and nowhere else.
describe Rackbench::Report::Columns do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  let(:columns) { Rackbench::Report::Columns::ALL }
  let(:column_class) { Rackbench::Report::Column }

  # Two configurations on which every condition holds: open loop (the
  # engine fixture's), latency measured, large responses (8 MiB each),
  # the second behind a caching proxy, over TLS and with a service; a
  # third is a WebSocket broadcast (Trial::Ws).
  WS_DOCUMENT = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_ws_broadcast.json", __dir__))).freeze

  let(:report) do
    proxy = { "name" => "nginx-cache", "program" => "nginx", "version" => "1.22.1",
              "sample" => { "cpu_user_s" => 0.2, "cpu_system_s" => 0.3, "duration_s" => 2.0, "pss_peak_bytes" => 7_000_000 },
              "cache" => { "hits" => 95, "misses" => 5, "uncached" => 0 } }
    services = [{ "name" => "postgresql", "program" => "postgres", "version" => "15.18",
                  "sample" => { "cpu_user_s" => 0.3, "cpu_system_s" => 0.1, "duration_s" => 2.0, "pss_peak_bytes" => 40_000_000 } }]
    Rackbench::Store.open(dir) do |store|
      ReportStore.fill(store, { ReportStore.dims(ruby: "a").merge("app" => "download") => [50, 51, 49, 50, 50],
                                ReportStore.dims(ruby: "b").merge("app" => "download") => [60, 61, 59, 60, 60, nil],
                                ReportStore.dims(ruby: "c").merge("app" => "ws-rack") => [70, 71, 69, 70, 70] },
                       fields: lambda { |dims, _, engine|
                         next { kind: "ws", result: WS_DOCUMENT, websocket: { "idle" => { "pss_bytes" => 20_000_000 } } } if dims["ruby"] == "c"
                         next {} unless dims["ruby"] == "b"

                         { proxy: proxy, services: services, result: engine.merge("tls" => ReportStore.tls_document) }
                       })
      Rackbench::Report.new(store)
    end
  end

  # The headings each view rendered, read back from its output.
  def terminal_headings(report, **options)
    line = Rackbench::Report::Terminal.new(report, **options).render.lines.grep(/\A\|/)[1]
    line.split("|").map(&:strip).reject(&:empty?)
  end

  def csv_headings(report, **options)
    CSV.parse(Rackbench::Report::Csv.new(report, **options).render).first
  end

  def html_headings(document, **options)
    html = Rackbench::HtmlReport::Tables.new(Rackbench::HtmlReport::Document.new(document), **options).configs
    html.scan(%r{<th(?: [^>]*)?>(.*?)</th>}).flatten.map { |h| CGI.unescapeHTML(h) }
  end

  def layout(report, cols = columns)
    Rackbench::Report::ColumnLayout.new(report.configs.map { |c| c.to_h(cols) }, dimensions: report.dimensions,
                                        rate_unit: report.rate_unit, detect: report.options.detect, columns: cols)
  end

  it "generates every view from the table: each column in every view it names, in the table's order" do
    all = layout(report)
    views = {
      terminal: terminal_headings(report), csv: csv_headings(report), html: html_headings(report.to_h)
    }
    views.each do |view, shown|
      claimed = columns.select { |c| c.shown_in?(view) }
      refute_empty claimed
      claimed.each do |c|
        refute_empty c.cells(view, all), "#{c.name} shows in the #{view} view when every condition holds"
      end
      expected = columns.flat_map { |c| c.cells(view, all).map(&:heading) }
      assert_equal expected, shown, "the #{view} view's headings are the table's, in its order"
    end
    assert_equal columns.select(&:json?).map(&:name), report.to_h["configs"].first.keys, "the JSON entry's keys"
  end

  it "shows a column added to the table in every view it names, at its place, and nowhere before" do
    range = column_class.new("rps_range", unit: :rate, value: ->(c) { c.summary.max - c.summary.min },
                                          csv: column_class.cell("rps_range"), terminal: column_class.cell("range"),
                                          html: column_class.cell("range/s"))
    extended = columns.dup.insert(columns.index { |c| c.name == "rps_max" } + 1, range).freeze

    entry = report.configs.first.to_h(extended)
    assert_equal %w[rps_max rps_range rps_cv], entry.keys.each_cons(3).find { |_, k, _| k == "rps_range" }
    assert_equal 2.0, entry["rps_range"], "51 - 49 req/s"
    refute report.configs.first.to_h.key?("rps_range"), "the default table does not have it"

    csv = CSV.parse(Rackbench::Report::Csv.new(report, columns: extended).render)
    at = csv[0].index("rps_range")
    assert_equal ["rps_max", "rps_range", "rps_cv"], csv[0][at - 1..at + 1]
    assert_equal "2.0", csv[1][at]
    refute_includes csv_headings(report), "rps_range"

    terminal = terminal_headings(report, columns: extended)
    assert_equal ["95% CI", "range", "CV"], terminal[terminal.index("range") - 1..terminal.index("range") + 1]
    assert_match(/\|\s+2\.0 \|\s+1\.4% \|/, Rackbench::Report::Terminal.new(report, columns: extended).render)
    refute_includes terminal_headings(report), "range"

    document = report.to_h.merge("configs" => report.configs.map { |c| c.to_h(extended) })
    html = html_headings(document, columns: extended)
    assert_equal ["offered/s", "range/s", "95% CI"], html[html.index("range/s") - 1..html.index("range/s") + 1]
    refute_includes html_headings(report.to_h), "range/s"
  end

  describe "conditions" do
    def entry(**values)
      { "dims" => { "ruby" => "a" }, "rps_median" => 1000.0, "bytes_per_s" => 10_000.0, "offered_rps" => nil,
        "latency_us" => nil }.merge(values.transform_keys(&:to_s))
    end

    def headings(view, *entries)
      Rackbench::Report::ColumnLayout.new(entries, dimensions: ["ruby"]).headings(view)
    end

    it "shows latency in the terminal only when something measured it, and always on the page" do
      measured = entry(latency_us: { "p50" => 100.0, "p99" => 900.0, "p99_9" => 2000.0 })
      assert_equal %w[p50 p99 p99.9], headings(:terminal, entry, measured) & %w[p50 p99 p99.9]
      assert_empty headings(:terminal, entry, entry) & %w[p50 p99 p99.9]
      assert_equal %w[p50 p99 p99.9], headings(:html, entry) & %w[p50 p99 p99.9]
      assert_includes headings(:csv, entry), "latency_p50_us", "CSV keeps its columns whatever the data"
    end

    it "shows MB/s in the terminal only for large responses (64 KB or more each on average)" do
      assert_includes headings(:terminal, entry(bytes_per_s: 65_536 * 1000.0)), "MB/s"
      refute_includes headings(:terminal, entry(bytes_per_s: 65_535 * 1000.0)), "MB/s"
      refute_includes headings(:terminal, entry(bytes_per_s: 65_536 * 1000.0, rps_median: nil)), "MB/s"
      assert_includes headings(:html, entry), "received/s"
    end

    it "shows body MB/s with its interval for downloads and for h2c, and not for small HTTP/1.1 responses" do
      download = entry(bytes_per_s: 65_536 * 1000.0, mb_per_s: 65.5, mb_per_s_ci95: [64.0, 67.0])
      h2c = entry(mb_per_s: 0.01, protocol: "h2c")
      small = entry(mb_per_s: 0.01, protocol: "http1")
      assert_includes headings(:terminal, download), "body MB/s"
      assert_includes headings(:terminal, h2c), "body MB/s"
      refute_includes headings(:terminal, small), "body MB/s"
      refute_includes headings(:terminal, entry(bytes_per_s: 65_536 * 1000.0)), "body MB/s", "no figure, no column"
      assert_equal ["body MB/s", "MB/s 95% CI"], headings(:html, h2c) & ["body MB/s", "MB/s 95% CI"]
      refute_includes headings(:html, small), "body MB/s"
      layout = Rackbench::Report::ColumnLayout.new([download], dimensions: ["ruby"])
      cell = layout.cells(:terminal).find { |c| c.heading == "body MB/s" }
      assert_equal "65.5 ±2.3%", cell.write(download)
      assert_equal "65.5", cell.write(download.merge("mb_per_s_ci95" => nil)), "no interval below min_batches"
    end

    it "shows the offered rate only in open loop" do
      assert_includes headings(:terminal, entry, entry(offered_rps: 200.0)), "offered"
      assert_includes headings(:html, entry(offered_rps: 200.0)), "offered/s"
      refute_includes headings(:terminal, entry), "offered"
      refute_includes headings(:html, entry), "offered/s"
      refute_includes headings(:csv, entry(offered_rps: 200.0)), "offered_rps"
    end
  end

  it "refuses a column naming an unknown view or unit" do
    error = assert_raises(ArgumentError) { column_class.new("x", value: :id, pdf: column_class.cell("x")) }
    assert_match(/column x: unknown views pdf/, error.message)
    error = assert_raises(ArgumentError) { column_class.new("x", unit: :furlongs, value: :id) }
    assert_match(/column x: unknown unit :furlongs/, error.message)
  end

  it "gives every column a unique name, and keeps the view-only ones out of the JSON entry" do
    names = columns.map(&:name)
    assert_equal names.uniq, names
    shown_only = columns.reject(&:json?)
    assert_equal %w[rps_ci95_relative mb_per_s_csv tls_csv], shown_only.map(&:name)
    shown_only.each { |c| refute c.shown_in?(:json) }
    refute report.configs.first.to_h.key?("rps_ci95_relative")
    refute report.configs.first.to_h.key?("mb_per_s_csv")
  end
end
