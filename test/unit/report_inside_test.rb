# frozen_string_literal: true

require "test_helper"
require "cgi"
require "csv"
require "json"
require_relative "../support/report_store"
require_relative "../support/inside_document"

# The inside figures in every view of a report: the terminal section, the
# JSON keys (each documented in doc/output.md), CSV, the HTML section with
# its memory chart and profile hook, and compare.
describe "Report: inside the server" do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  # CPU µs per request of each batch, by ruby: b costs half of a.
  INSIDE_CPU_US = { "a" => [200.0, 202.0, 198.0, 201.0, 199.0], "b" => [100.0, 101.0, 99.0, 100.5, 99.5] }.freeze

  # A sample with the CPU time that gives +us+ per request over the
  # engine's 400 responses, 3:1 user to system.
  def with_cpu(dims, batch, engine)
    cpu_s = INSIDE_CPU_US.fetch(dims["ruby"])[batch - 1] * engine["requests"] / 1e6
    { sample: { "rss_peak_bytes" => 40_000_000, "pss_peak_bytes" => 30_000_000, "cpu_user_s" => cpu_s * 0.75,
                "cpu_system_s" => cpu_s * 0.25 } }
  end

  # The counting agent's document of a batch (InsideDocument.forked over
  # the engine's 400 responses in 2 s): b allocates twice as much and each
  # of its workers holds 60 MB more; allocations grow 0.1% a batch.
  def with_agent(dims, batch, engine)
    doc = InsideDocument.forked.merge("window" => { "requests" => engine["requests"], "duration_s" => 2.0 })
    factor = (dims["ruby"] == "b" ? 2 : 1) * (1 + 0.001 * batch)
    doc["processes"].each do |p|
      p["allocated_objects"] = (p["allocated_objects"] * factor).round
      p["memory"]["window_end"]["pss_bytes"] += 60 * InsideDocument::MB if dims["ruby"] == "b" && p["role"] == "worker"
    end
    doc["missing"] = [{ "pid" => 99, "reason" => "forked in C" }] if dims["ruby"] == "b" && batch == 1
    with_cpu(dims, batch, engine).merge(inside: doc)
  end

  # cpu :: the sampler's CPU time in the samples; agent :: the agent's
  # documents too
  def report(cpu: true, agent: false)
    fields = agent ? method(:with_agent) : (method(:with_cpu) if cpu)
    Rackbench::Store.open(File.join(dir, "#{cpu}-#{agent}")) do |store|
      ReportStore.fill(store, { ReportStore.dims(ruby: "a") => [1000, 1010, 990, 1005, 995],
                                ReportStore.dims(ruby: "b") => [1500, 1400, 1600, 1450, 1550] }, fields: fields)
      Rackbench::Report.new(store, resamples: 200)
    end
  end

  let(:with) { report }
  let(:without) { report(cpu: false) }
  let(:agent) { report(agent: true) }
  let(:output_md) { File.read(File.expand_path("../../doc/output.md", __dir__)) }

  it "summarises CPU per request per configuration and compares it with the baseline's" do
    inside = with.configs.last.to_h["inside"]
    cpu = inside["figures"]["cpu_us_per_request"]
    assert_in_delta 100.0, cpu["median"], 1e-6
    assert_equal 2, cpu["ci95"].size
    assert_nil inside["agent"], "no counting agent ran: the sampler's CPU only"
    assert_equal with.configs.first.id, inside["baseline_id"]
    row = inside["against_baseline"]["figures"].first
    assert_equal ["cpu_us_per_request", "lower"], [row["name"], row["verdict"]]
    assert_in_delta 0.5, row["ratio"], 1e-6
    assert_equal "\u221250% CPU per request", inside["against_baseline"]["headline"]
    assert_nil with.configs.first.to_h["inside"]["against_baseline"], "the baseline against itself"
    assert_equal "cpu_us_per_request", with.inside_noise["lower_noise"], "CPU's CV is far below requests/s's here"
  end

  it "reads the counting agent's documents stored with the trials" do
    a, b = agent.configs.map { |c| c.to_h["inside"] }
    assert_equal "counting", a["agent"]
    # Allocations summed over the processes: master 1,000, workers 500,000
    # and 400,000; over the engine's 400 responses: 2,252.5 per request,
    # x1.003 in the median batch (3).
    assert_in_delta 2252.5 * 1.003, a["figures"]["allocations_per_request"]["median"], 0.01
    assert_in_delta 2 * 2252.5 * 1.003, b["figures"]["allocations_per_request"]["median"], 0.02
    assert_in_delta 1000 * 36.0 / 400, a["figures"]["gc_per_1k_requests"]["median"], 1e-9
    assert_equal 149 * InsideDocument::MB, a["figures"]["total_pss_bytes"]["median"]
    assert_equal 269 * InsideDocument::MB, b["figures"]["total_pss_bytes"]["median"]
    assert_equal 15, a["memory"].size, "3 processes x 5 batches"
    assert_equal({ "batch" => 1, "pid" => 12, "role" => "worker", "warmup_end_pss_bytes" => 52 * InsideDocument::MB,
                   "window_end_pss_bytes" => 118 * InsideDocument::MB }, b["memory"][2])
    assert_equal "\u221250% CPU per request, +100% allocations per request, +120 MB PSS", b["against_baseline"]["headline"]
    assert_equal [0, 1], [a["missing_processes"], b["missing_processes"]]
    gc = b["against_baseline"]["figures"].find { |r| r["name"] == "gc_per_1k_requests" }
    assert_equal "no difference detected", gc["verdict"]
    text = agent.terminal_table
    assert_match(/\| allocations per request +\| +2259 \|/, text)
    refute_includes text, "no counting agent"
    assert_equal 1, text.scan("  1 process of the trees gave no counts: the sums leave them out").size
    html = Rackbench::HtmlReport.new(agent.to_h).render
    assert_equal 1, html.scan("1 process(es) of the trees gave no counts").size
    assert_includes html, %(id="chart-inside-memory-0")
    assert_includes html, %(id="chart-inside-memory-1")
    compare = Rackbench::Report::Compare.configurations(agent, "ruby=a", "ruby=b")
    assert_includes compare.terminal_table, "B against A (all): \u221250% CPU per request, +100% allocations per request, +120 MB PSS"
  end

  it "prints the inside section in the terminal only when a configuration has figures" do
    text = with.terminal_table
    assert_includes text, "Inside the server (per configuration, over its ok batches):"
    assert_match(/\| server CPU per request \| +100\.0us \| .* \| +5 \| +0\.500 \| .* \| lower +\|/, text)
    assert_includes text, "  against #{with.configs.first.label}: \u221250% CPU per request"
    assert_includes text, "Lower-noise measure in this run: server CPU µs per request"
    plain = without.terminal_table
    refute_includes plain, "Inside the server"
    refute_includes plain, "Lower-noise"
  end

  it "documents every key of configs.inside, its figures and the trials' figures, and writes each" do
    doc = JSON.parse(JSON.generate(with.to_h))
    text = output_md[/^## The report document.*/m]
    documented = ->(prefix) { text.scan(/^\| `#{Regexp.escape(prefix)}([a-z0-9_]+)`/).flatten }
    inside = doc["configs"].last["inside"]
    assert_equal documented.call("configs.inside."), inside.keys
    assert_equal documented.call("configs.inside.figures."), inside["figures"].keys
    assert_equal Rackbench::Report::InsideFigures::NAMES, inside["figures"].keys
    assert_equal Rackbench::Report::InsideSummary::FIGURES.keys, inside["figures"].keys
    assert_equal Rackbench::Report::InsideFigures::NAMES, doc["trials"].first["inside"].keys
    %w[median mean cv ci95 per_batch batch_numbers].each do |key|
      assert_includes text[/^Each figure object:.*?\n\n/m], "`#{key}`"
    end
    assert_equal %w[median mean cv ci95 per_batch batch_numbers], inside["figures"]["cpu_us_per_request"].keys
    noise = text[/^\| `inside_noise` .*$/]
    doc["inside_noise"].each_key { |key| assert_includes noise, "`#{key}`" }
    against = text[/^\| `configs.inside.against_baseline` .*$/]
    inside["against_baseline"]["figures"].first.each_key { |key| assert_includes against, "`#{key}`" }
    without_doc = JSON.parse(JSON.generate(without.to_h))
    assert_nil without_doc["configs"].first["inside"]
    assert_nil without_doc["inside_noise"]
    assert_nil without_doc["trials"].first["inside"]
  end

  it "writes each figure's median and interval to CSV, empty without figures" do
    rows = CSV.parse(with.to_csv)
    at = rows[0].index("cpu_us_per_request_median")
    assert_equal %w[cpu_us_per_request_median cpu_us_per_request_ci95_low cpu_us_per_request_ci95_high],
                 rows[0][at, 3]
    assert_in_delta 100.0, Float(rows[2][at]), 1e-6
    assert_nil rows[1][rows[0].index("allocations_per_request_median")]
    plain = CSV.parse(without.to_csv)
    assert_nil plain[1][plain[0].index("cpu_us_per_request_median")]
  end

  describe "the HTML section" do
    INSIDE_MEMORY = [{ "batch" => 1, "pid" => 7, "role" => "worker", "warmup_end_pss_bytes" => 50_000_000,
                "window_end_pss_bytes" => 62_000_000 },
              { "batch" => 1, "pid" => 6, "role" => "master", "warmup_end_pss_bytes" => 30_000_000,
                "window_end_pss_bytes" => nil }].freeze

    def page(document, **options)
      Rackbench::HtmlReport.new(document, **options).render
    end

    def section(html)
      html[%r{<section id="inside">.*?</section>}m]
    end

    it "shows each configuration's figures with intervals, the headline and the run's lower-noise measure" do
      html = section(page(with.to_h))
      refute_nil html
      assert_includes html, "<th>figure</th>"
      assert_match(%r{<td>server CPU per request</td><td class="num">100\.0us</td><td class="num">[0-9.]+us – [0-9.]+us</td>},
                   html)
      assert_includes html, "Against #{CGI.escapeHTML(with.configs.first.label)}: \u221250% CPU per request"
      assert_includes html, "Lower-noise measure in this run: server CPU µs per request"
      assert_includes page(with.to_h), %(<a href="#inside">Inside the server</a>)
      refute_includes html, "data-chart", "no per-process memory without the agent: no chart"
    end

    it "leaves the section and its link out when no configuration has figures" do
      html = page(without.to_h)
      assert_nil section(html)
      refute_includes html, %(href="#inside")
    end

    it "draws the memory chart of every process at warmup end and window end" do
      doc = JSON.parse(JSON.generate(with.to_h)) # a saved document, not the report's own entries
      doc["configs"].last["inside"].merge!("memory" => INSIDE_MEMORY, "agent" => "counting")
      html = section(page(doc))
      id = "inside-memory-1"
      assert_includes html, %(<div class="chart" id="chart-#{id}" data-chart data-spec="spec-#{id}"></div>)
      spec = JSON.parse(html[%r{<script type="application/json" id="spec-#{id}">(.*?)</script>}m, 1])
      rows = spec["data"]["values"]
      assert_equal [["batch 1 pid 7 (worker)", "warmup end", 50.0], ["batch 1 pid 7 (worker)", "window end", 62.0],
                    ["batch 1 pid 6 (master)", "warmup end", 30.0]],
                   rows.map { |r| [r["process"], r["at"], r["mb"]] }, "an unknown PSS is left out, never drawn as 0"
      assert_equal %w[worker master], spec["encoding"]["color"]["scale"]["domain"]
      part_b = html[/<h3 id="inside-1">.*/m]
      refute_includes part_b, "No counting agent", "the agent counted"
      assert_includes section(page(with.to_h))[/<h3 id="inside-1">.*/m], "No counting agent"
    end

    it "calls the profile hook per configuration and draws what it returns" do
      hook = ->(config) { config["dims"]["ruby"] == "b" ? %(<div class="flame">flame of #{config["id"]}</div>) : nil }
      html = section(page(with.to_h, profile_html: hook))
      assert_equal 1, html.scan('<div class="flame">').size
      assert_includes html, "flame of #{with.configs.last.id}"
      assert_nil section(page(with.to_h)).index("flame"), "no hook, no profile"
      # A configuration with a profile and no figures still gets its part.
      profiled = page(without.to_h, profile_html: ->(c) { %(<div class="flame">#{c["id"]}</div>) })
      assert_equal 2, section(profiled).scan('<div class="flame">').size
      assert_includes profiled, %(<a href="#inside">Inside the server</a>)
    end
  end

  it "puts the inside figures side by side in compare A B, with ratios, verdicts and the headline" do
    compare = Rackbench::Report::Compare.configurations(with, "ruby=a", "ruby=b")
    inside = JSON.parse(JSON.generate(compare.to_a)).first["inside"]
    assert_equal "\u221250% CPU per request", inside["headline"]
    assert_equal "lower", inside["figures"].first["verdict"]
    text = compare.terminal_table
    assert_includes text, "Inside the server: all"
    assert_match(/\| server CPU per request \| +200\.0us \| +100\.0us \| +0\.500 \| [0-9.]+–[0-9.]+ \| lower +\|/, text)
    assert_includes text, "  B against A (all): \u221250% CPU per request"
    plain = Rackbench::Report::Compare.configurations(without, "ruby=a", "ruby=b")
    assert_nil plain.to_a.first["inside"]
    refute_includes plain.terminal_table, "Inside the server"
  end
end
