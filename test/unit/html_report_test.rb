# frozen_string_literal: true

require "test_helper"
require "json"

describe Rackbench::HtmlReport do
  FIXTURE = File.expand_path("../fixtures/report_document.json", __dir__)
  HOSTILE = "</script><img src=x onerror=alert(1)>"
  QUOTES = %q("'&<>)
  CHART_IDS = %w[throughput matrix latency timelines memory].freeze

  let(:document) { JSON.parse(File.read(FIXTURE)) }
  let(:html) { Rackbench::HtmlReport.new(document).render }

  # The page with the inlined libraries (Vega's own source, which mentions
  # URLs in comments and has its own "<" characters) cut out: the markup,
  # the CSS, our scripts and the chart specs.
  def without_libraries(page)
    page.gsub(%r{<script data-library="[^"]*">.*?</script>}m, "<script data-library></script>")
  end

  # The JSON spec of each chart, parsed, by chart id.
  def specs(page)
    page.scan(%r{<script type="application/json" id="spec-([a-z]+)">(.*?)</script>}m)
        .to_h { |id, json| [id, JSON.parse(json)] }
  end

  # Every value of every "data" => {"values" => [...]} in a spec.
  def data_rows(spec)
    case spec
    when Hash then (spec.dig("data", "values") || []) + spec.values.flat_map { |v| data_rows(v) }
    when Array then spec.flat_map { |v| data_rows(v) }
    else []
    end
  end

  def config_template
    document["configs"].first
  end

  # The fixture with +count+ configurations: copies of the first, each
  # with its own id, label and dims, 3 rubies × processes × threads.
  def many_configs(count)
    doc = document
    doc["configs"] = Array.new(count) do |i|
      dims = { "ruby" => "ruby-#{i % 3}", "server" => "puma", "app" => "rack-hello",
               "processes" => 1 + (i / 3 % 3), "threads" => 1 + (i / 9) }
      config_template.merge("id" => "config #{i}", "label" => "label #{i}", "dims" => dims,
                            "rps_median" => 1000.0 + i)
    end
    doc["trials"] = doc["configs"].map.with_index do |c, i|
      document["trials"].first.merge("config_id" => c["id"], "position" => i + 1)
    end
    doc["dimensions"] = %w[ruby processes threads]
    doc
  end

  it "renders one HTML page with a Content-Security-Policy that forbids the network and eval" do
    assert html.start_with?("<!DOCTYPE html>")
    assert_equal Encoding::UTF_8, html.encoding
    csp = html[/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/, 1]
    assert_equal "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:", csp
    assert html.index("Content-Security-Policy") < html.index("<script"), "the policy comes before any script"
  end

  it "references no URL a browser would load" do
    refute_match(%r{\b(?:src|href|action|formaction|poster|srcset|data)\s*=\s*["']?\s*(?:[a-z]+:)?//}i, html)
    refute_match(/url\s*\(/i, without_libraries(html))
    refute_match(/@import/i, html)
    markup = without_libraries(html)
    refute_match(%r{https?:|//[a-z0-9]}i, markup.gsub(%r{<script type="application/json".*?</script>}m, ""))
    refute_match(/<(?:link|iframe|img|object|embed|base|source|audio|video)\b/i, markup)
    specs(html).each_value { |spec| refute_match(/https?:|"\$schema"/, JSON.generate(spec)) }
  end

  it "inlines the vega gem's JavaScript without ever ending a script early" do
    Rackbench::HtmlReport::Assets::FILES.each { |name| assert_includes html, %(<script data-library="#{name}">) }
    opened = html.scan(/<script\b/i).size
    assert_equal 3 + 2 + CHART_IDS.size, opened, "libraries, our two scripts, one spec per chart"
    assert_equal opened, html.scan(%r{</script}i).size, "every </script in the page closes a script we opened"
    vega = File.read(File.join(Rackbench::HtmlReport::Assets.directory, "vega.js"))
    assert_includes html, Rackbench::HtmlReport::Escape.script_source(vega)
  end

  it "escapes every string from the document wherever it lands" do
    refute_includes html, HOSTILE
    refute_includes html, QUOTES
    refute_includes html, "onerror=alert(1)>"
    markup = without_libraries(html)
    escaped = CGI.escapeHTML(HOSTILE)
    assert_includes markup, "<td>#{escaped}</td>", "a dim value in the configs table"
    assert_includes markup, "&quot;&#39;&amp;&lt;&gt;", "the reason, source text and environment"
    assert_includes markup, "<pre>name: threads &quot;&#39;&amp;&lt;&gt;\n", "the experiment file"
    assert_includes markup, "# &lt;/pre&gt;&lt;script&gt;alert(&#39;pre&#39;)&lt;/script&gt;"
    assert_includes markup, "<title>rackbench: threads &quot;&#39;&amp;&lt;&gt;</title>"
    assert_includes markup, "<li>swap in use: #{escaped}</li>", "the machine's warnings"
    # In the JSON specs the strings are \u-escaped, and parse back intact.
    assert_includes html, "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e"
    configs = data_rows(specs(html)["throughput"]).map { |row| row["config"] }
    assert_includes configs, "#{HOSTILE} · 1×5"
  end

  it "includes the spec of every chart, each with its data" do
    all = specs(html)
    assert_equal CHART_IDS, all.keys
    assert_equal CHART_IDS, Rackbench::HtmlReport::Charts.all.map(&:id)
    CHART_IDS.each do |id|
      assert_includes html, %(<div class="chart" id="chart-#{id}" data-chart data-spec="spec-#{id}"></div>)
      refute_empty data_rows(all[id]), "#{id} has data"
    end
  end

  it "adds the concurrency sweep section only for a document with a concurrency_sweep" do
    refute_includes html, "spec-concurrency-sweep"
    doc = document.merge("concurrency_sweep" => [
                           { "id" => "x", "label" => HOSTILE, "dims" => {}, "points" => [1, 8].map do |n|
                             { "connections" => n, "config_id" => "x", "batches" => 1, "rps_median" => 100.0 * n,
                               "rps_ci95" => nil, "latency_us" => { "p50" => 100.0 * n, "p95" => 200.0 * n, "p99" => 300.0 * n },
                               "latency_us_batch_range" => nil }
                           end }
                         ])
    page = Rackbench::HtmlReport.new(doc).render
    spec = specs(page.gsub("spec-concurrency-sweep", "spec-sweep"))["sweep"]
    assert_equal [0.1, 0.8], data_rows(spec).select { |r| r["percentile"] == "p50" }.map { |r| r["ms"] }
    refute_includes without_libraries(page), HOSTILE
  end

  it "draws throughput with CI whiskers, every batch and the verdict colour" do
    spec = specs(html)["throughput"]
    rule, batches, medians = spec["layer"]
    assert_equal 3, rule["data"]["values"].size, "the config with too few batches has no CI"
    assert_equal 11, batches["data"]["values"].size, "one dot per ok batch"
    assert_equal [3984.7, 7897.3, 4161.5, 8117.7], medians["data"]["values"].map { |r| r["rps"] }
    assert_equal ["baseline", "faster", "no difference detected", "too few batches"],
                 medians["encoding"]["color"]["scale"]["domain"], "the verdicts present, in a fixed order"
  end

  it "leaves out layers that would have no data (one batch each: no CI; one config: one label side)" do
    doc = document
    doc["configs"] = [doc["configs"].first.merge("rps_ci95" => nil, "rps_per_batch" => [3984.7])]
    doc = Rackbench::HtmlReport::Document.new(doc)
    assert_equal %w[circle point], Rackbench::HtmlReport::Charts.throughput(doc)[:layer].map { |l| l[:mark][:type] }
    assert_equal %w[point text], Rackbench::HtmlReport::Charts.memory(doc)[:layer].map { |l| l[:mark][:type] }
  end

  it "lays out the dot matrix as rubies by processes × threads" do
    rows = specs(html)["matrix"]["data"]["values"]
    assert_equal ["ruby-3.1", HOSTILE], rows.map { |r| r["ruby"] }.uniq
    assert_equal %w[1×1 1×5], rows.map { |r| r["shape"] }.uniq
    assert_equal %w[3,985 7,897 4,162 8,118], rows.map { |r| r["value"] }
  end

  it "panels the dot matrix by the other dimensions that vary" do
    doc = document
    doc["dimensions"] = %w[ruby server threads]
    doc["configs"][1]["dims"]["server"] = "falcon"
    spec = Rackbench::HtmlReport::Charts.dot_matrix(Rackbench::HtmlReport::Document.new(doc))
    assert_equal "panel", spec[:facet][:field]
    assert_equal ["server=puma", "server=falcon"], spec[:data][:values].map { |r| r["panel"] }.uniq
  end

  it "places percentiles on a scale of nines, with the maximum just past the last" do
    rows = specs(html)["latency"]["data"]["values"].select { |r| r["config"] == "ruby-3.1 · 1×1" }
    xs = rows.map { |r| r["x"].round(6) }
    assert_equal [0.0, 0.30103, 1.0, 2.0, 3.0, 3.5], xs
    axis = specs(html)["latency"]["encoding"]["x"]["axis"]
    assert_equal [0, 1, 2, 3, 3.5], axis["values"]
    charts = Rackbench::HtmlReport::Charts
    assert_equal "datum.value < 0.25 ? '0%' : datum.value < 1.25 ? '90%' : datum.value < 2.25 ? '99%' : " \
                 "datum.value < 3.25 ? '99.9%' : 'max'", charts.nines_label_expr([0, 1, 2, 3])
  end

  it "puts warmup seconds before 0 and shades them" do
    spec = specs(html)["timelines"]
    band, line = spec["layer"]
    assert_equal "rect", band["mark"]["type"]
    rows = spec["data"]["values"]
    assert_equal 11, rows.map { |r| r["trial"] }.uniq.size, "one line per ok trial"
    first = rows.select { |r| r["trial"] == rows.first["trial"] }
    assert_equal [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0], first.map { |r| r["t"] }
    assert_equal %w[warmup warmup measured], first.first(3).map { |r| r["phase"] }
    assert_equal "trialpick", line["params"].first["name"]
  end

  it "drops the in-flight tail past a window and scales a window's last partial second" do
    trial = document["trials"].first.merge(
      "warmup_s" => 2.0, "warmup_timeline" => [{ "second" => 0, "requests" => 7691 }, { "second" => 1, "requests" => 7800 },
                                               { "second" => 2, "requests" => 16 }],
      "measure_s" => 2.5, "timeline" => [{ "second" => 0, "requests" => 8000 }, { "second" => 1, "requests" => 8100 },
                                         { "second" => 2, "requests" => 4000 }, { "second" => 3, "requests" => 5 }]
    )
    doc = Rackbench::HtmlReport::Document.new(document.merge("trials" => [trial]))
    rows = Rackbench::HtmlReport::Charts.timelines(doc)[:data][:values]
    assert_equal [[-2.0, 7691.0], [-1.0, 7800.0], [0.0, 8000.0], [1.0, 8100.0], [2.0, 8000.0]],
                 rows.map { |r| [r["t"], r["rps"]] }
  end

  it "plots memory against throughput with PSS, or RSS where PSS is unknown" do
    doc = document
    doc["configs"][0]["pss_peak_bytes"] = nil
    spec = Rackbench::HtmlReport::Charts.memory(Rackbench::HtmlReport::Document.new(doc))
    rows = spec[:data][:values]
    assert_equal [["RSS", 32.0], ["PSS", 32.5]], rows.first(2).map { |r| [r["measure"], r["mb"]] }
    assert_equal 3, spec[:layer].size, "points and labels on both sides"
  end

  it "lists every configuration and the failed trials in tables" do
    table = html[%r{<section id="configs">.*?</section>}m]
    assert_equal 4, table.scan("<tr><td>").size
    assert_includes table, "<td class=\"num\">2 + 1 failed</td>"
    assert_includes table, "<td class=\"num\">3945.4 – 4005.0</td>"
    assert_includes table, "no difference detected</span><br><span class=\"note\">"
    assert_includes table, "<td class=\"num\">14</td>", "batches needed"
    assert_includes table, "<li>batch 2: &quot;&#39;&amp;&lt;&gt; robust z -4.1</li>"
    failed = html[%r{<section id="failed">.*?</section>}m]
    assert_includes failed, "server died: &quot;&#39;&amp;&lt;&gt; #{CGI.escapeHTML(HOSTILE)}\nlog tail"
    assert_includes html[%r{<section id="environment">.*?</section>}m], "&quot;governor&quot;: &quot;performance&quot;"
  end

  it "handles a single configuration, without comparison" do
    doc = document
    doc["configs"] = [doc["configs"].first]
    doc["trials"] = doc["trials"].select { |t| t["config_id"] == doc["configs"].first["id"] }
    page = Rackbench::HtmlReport.new(doc).render
    assert_equal CHART_IDS, specs(page).keys
    assert_includes page, '<p class="empty">No trial failed.</p>'
  end

  it "keeps configurations whose every trial failed in the table and the throughput axis" do
    doc = document
    doc["configs"][1].merge!("batches" => 0, "failed" => 3, "rps_median" => nil, "rps_ci95" => nil,
                             "rps_per_batch" => [], "ratio" => nil, "ratio_ci95" => nil, "verdict" => nil,
                             "latency_us" => nil, "latency_curve_us" => nil, "rss_peak_bytes" => nil,
                             "pss_peak_bytes" => nil, "rps_per_gb" => nil)
    all = specs(Rackbench::HtmlReport.new(doc).render)
    axis = all["throughput"]["layer"].last["encoding"]["y"]["scale"]["domain"]
    assert_includes axis, "ruby-3.1 · 1×5"
    cell = all["matrix"]["data"]["values"].find { |r| r["config"] == "ruby-3.1 · 1×5" }
    assert_equal [nil, "failed"], cell.values_at("rps", "value")
    assert_includes all["throughput"]["layer"].last["encoding"]["color"]["scale"]["domain"], "no data"
  end

  it "says so in place of a chart with nothing to draw" do
    doc = document
    doc["trials"].each { |t| t.merge!("timeline" => [], "warmup_timeline" => []) }
    doc["configs"].each { |c| c.merge!("rps_median" => nil, "latency_curve_us" => nil, "rps_per_batch" => []) }
    page = Rackbench::HtmlReport.new(doc).render
    assert_empty specs(page)
    Rackbench::HtmlReport::Charts.all.each { |chart| assert_includes page, CGI.escapeHTML(chart.empty_text) }
    assert_includes page, "<h2>Configurations</h2>"
  end

  it "gives many configurations readable charts: timeline panels, no point labels" do
    doc = Rackbench::HtmlReport::Document.new(many_configs(36))
    timelines = Rackbench::HtmlReport::Charts.timelines(doc)
    assert_equal "config", timelines[:facet][:field]
    assert_equal 1, Rackbench::HtmlReport::Charts.memory(doc)[:layer].size
    matrix = Rackbench::HtmlReport::Charts.dot_matrix(doc)
    assert_equal %w[1×1 1×2 1×3 1×4 2×1 2×2 2×3 2×4 3×1 3×2 3×3 3×4], matrix[:encoding][:y][:sort],
                 "rows by processes, then threads"
    page = Rackbench::HtmlReport.new(many_configs(36)).render
    assert_equal 36, page[%r{<section id="configs">.*?</section>}m].scan("<tr><td>").size
  end

  it "makes configuration names unique, so charts keep them apart" do
    doc = document
    doc["configs"].each { |c| c["label"] = "same" }
    names = Rackbench::HtmlReport::Document.new(doc).names
    assert_equal ["same", "same (2)", "same (3)", "same (4)"], names
  end

  it "refuses what is not a report document of format_version 2" do
    error = assert_raises(Rackbench::Error) { Rackbench::HtmlReport.new({ "format" => "rackbench-trials" }) }
    assert_match(/not a rackbench-report document/, error.message)
    error = assert_raises(Rackbench::Error) { Rackbench::HtmlReport.new(document.merge("format_version" => 1)) }
    assert_match(/format_version 1 is not supported/, error.message)
  end

  it "writes the page atomically and names an unwritable path" do
    Dir.mktmpdir do |dir|
      path = File.join(dir, "report.html")
      assert_equal path, Rackbench::HtmlReport.new(document).write(path)
      assert_equal ["report.html"], Dir.children(dir)
      assert File.read(path).end_with?("</html>\n")
      report = Rackbench::HtmlReport.new(document)
      error = assert_raises(Rackbench::Error) { report.write(File.join(dir, "no/such.html")) }
      assert_match(%r{cannot write the HTML report to .*no/such\.html}, error.message)
    end
  end
end

describe Rackbench::HtmlReport::Escape do
  let(:escape) { Rackbench::HtmlReport::Escape }

  it "escapes JSON for a script element and parses back to the same strings" do
    value = { "a" => "</script><!-- & > \u2028\u2029 \"'" }
    json = escape.script_json(value)
    refute_match(/[<>&\u2028\u2029]/, json)
    assert_equal value, JSON.parse(json)
  end

  it "stops inlined JavaScript from closing its script element" do
    source = %(var a = "</script><script>alert(1)</SCRIPT>"; var b = "<!--";)
    safe = escape.script_source(source)
    refute_match(%r{</script}i, safe)
    refute_includes safe, "<!--"
    assert_equal %(var a = "<\\/script><script>alert(1)<\\/SCRIPT>"; var b = "<\\!--";), safe
  end

  it "escapes HTML text and attributes, nil as empty" do
    assert_equal "&quot;&#39;&amp;&lt;&gt;", escape.html(%q("'&<>))
    assert_equal "", escape.html(nil)
  end
end
