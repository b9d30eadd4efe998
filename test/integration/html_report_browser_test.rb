# frozen_string_literal: true

require "test_helper"
require "cgi"
require "fileutils"
require "json"
require_relative "../support/report_store"
require_relative "../support/entry_results"
require_relative "../support/real_profiles"

# The HTML report opened by headless Chromium with the network cut off:
# every chart must draw (an SVG in each chart container) with no error, no
# console output and no blocked request. The page itself writes its render
# status into <body data-render-status> once every vega-embed promise has
# settled (HtmlReport::Scripts); the test reads it from the dumped DOM.
# Screenshots are kept in tmp/html_report/ of the repository.
# RACKBENCH_CHROMIUM names the browser (default: chromium on PATH);
# RACKBENCH_CHROMIUM_TIMEOUT_S bounds each run of it (default: 90).
describe "the HTML report in headless Chromium" do
  FIXTURE = File.expand_path("../fixtures/report_document.json", __dir__)
  OUT_DIR = File.expand_path("../../tmp/html_report", __dir__)
  CHART_IDS = Rackbench::HtmlReport::Charts.all.map { |c| "chart-#{c.id}" }
  TIMEOUT_S = Float(ENV.fetch("RACKBENCH_CHROMIUM_TIMEOUT_S", "90"))
  # No network: every proxied request goes to a closed port, names resolve
  # to nothing, and Chromium's own background fetches are turned off as
  # far as flags allow. Virtual time lets the page's promises and timers
  # run to completion before the DOM is dumped.
  FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--enable-logging=stderr", "--v=0", "--hide-scrollbars", "--virtual-time-budget=20000"
  ].freeze

  def chromium
    @chromium ||= ENV["RACKBENCH_CHROMIUM"] || %w[chromium chromium-browser].find do |name|
      ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).any? { |dir| File.executable?(File.join(dir, name)) }
    end
  end

  before do
    unless chromium
      # bin/setup --all installs it, so in CI its absence is a broken setup, not a reason to skip.
      message = "chromium is not installed (bin/setup --all installs it; or apt-get install chromium)"
      ENV["CI"] ? flunk(message) : skip(message)
    end
    FileUtils.mkdir_p(OUT_DIR)
  end

  # Runs Chromium on +args+ with a fresh profile, bounded by TIMEOUT_S;
  # on timeout its whole process group is stopped (TERM, then KILL) and the
  # test fails. Returns [stdout, stderr].
  def run_chromium(*args)
    Dir.mktmpdir("rackbench-chromium") do |dir|
      out = File.join(dir, "stdout")
      err = File.join(dir, "stderr")
      pid = Process.spawn(chromium, *FLAGS, "--user-data-dir=#{dir}/profile", *args,
                          out: out, err: err, in: File::NULL, pgroup: true)
      waiter = Process.detach(pid)
      finished = waiter.join(TIMEOUT_S)
      stop_group(pid, waiter)
      flunk "chromium did not finish within #{TIMEOUT_S}s: #{File.read(err).lines.last(5).join}" unless finished
      [File.read(out, encoding: "UTF-8"), File.read(err, encoding: "UTF-8")]
    end
  end

  # Chromium's helper processes share its group; none may outlive the test.
  def stop_group(pgid, waiter)
    %i[TERM KILL].each do |signal|
      return unless group_alive?(pgid)

      Process.kill(signal, -pgid)
      waiter.join(5)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
      Thread.pass while group_alive?(pgid) && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    end
  rescue Errno::ESRCH
    nil
  end

  def group_alive?(pgid)
    Process.kill(0, -pgid)
    true
  rescue Errno::ESRCH
    false
  end

  def write_page(name, document, html: nil)
    path = File.join(OUT_DIR, "#{name}.html")
    File.write(path, html || Rackbench::HtmlReport.new(document).render)
    path
  end

  # The page's render status and its dumped DOM.
  def open_page(path)
    dom, stderr = run_chromium("--dump-dom", "file://#{path}")
    raw = dom[/<body[^>]*\sdata-render-status="([^"]*)"/, 1]
    flunk "the page never reported its render status; chromium said:\n#{stderr.lines.last(10).join}" unless raw
    [JSON.parse(CGI.unescapeHTML(raw)), dom, stderr]
  end

  def screenshot(path, name)
    png = File.join(OUT_DIR, "#{name}.png")
    FileUtils.rm_f(png)
    run_chromium("--window-size=1400,5000", "--screenshot=#{png}", "file://#{path}")
    assert File.exist?(png), "chromium wrote no screenshot at #{png}"
    assert_equal "\x89PNG".b, File.binread(png, 4)
    png
  end

  # chart_ids :: the charts the page must have drawn (default: every
  # chart of Charts.all; a request list adds the page chart)
  def assert_rendered_cleanly(status, dom, stderr, chart_ids: CHART_IDS)
    assert_equal [], status["errors"], "errors in the page"
    assert_equal [], status["warnings"], "warnings in the page"
    assert_equal chart_ids.size, status["charts"]
    assert_equal chart_ids, status["rendered"]
    markup = dom.gsub(%r{<script\b.*?</script>}m, "")
    chart_ids.each do |id|
      container = markup[%r{<div[^>]*\sid="#{id}".*?</section>}m]
      assert container&.include?("<svg"), "#{id} holds no SVG"
    end
    refute markup.match?(/<img\b/), "a document string became an <img> element"
    assert_equal [], stderr.lines.grep(/:CONSOLE/), "console output"
  end

  # The fixture grown to 36 configurations (3 rubies × 3 processes × 4
  # threads), one of them with every trial failed, some without a
  # confidence interval, half the trials without a timeline.
  def crowded_document
    doc = JSON.parse(File.read(FIXTURE))
    config = doc["configs"].first
    trial = doc["trials"].first
    doc["configs"] = Array.new(36) do |i|
      dims = { "ruby" => "ruby-#{i % 3}", "processes" => 1 + (i / 3 % 3), "threads" => 1 + (i / 9) }
      config.merge("id" => "c#{i}", "label" => "ruby-#{i % 3} · #{dims["processes"]}×#{dims["threads"]}",
                   "dims" => dims, "rps_median" => 2000.0 + 150 * i, "rps_per_batch" => [2000.0 + 150 * i],
                   "verdict" => i.zero? ? "baseline" : %w[faster slower].fetch(i % 2),
                   "rps_ci95" => i % 4 == 3 ? nil : [1950.0 + 150 * i, 2050.0 + 150 * i])
    end
    doc["configs"][5].merge!("batches" => 0, "failed" => 3, "rps_median" => nil, "rps_ci95" => nil,
                             "rps_per_batch" => [], "verdict" => nil, "latency_curve_us" => nil,
                             "rss_peak_bytes" => nil, "pss_peak_bytes" => nil)
    doc["trials"] = doc["configs"].each_with_index.map do |c, i|
      timelines = i.even? ? trial.slice("timeline", "warmup_timeline") : { "timeline" => [], "warmup_timeline" => [] }
      trial.merge("config_id" => c["id"], "position" => i + 1, "status" => i == 5 ? "failed" : "ok", **timelines)
    end
    doc["dimensions"] = %w[ruby processes threads]
    doc
  end

  it "draws every chart of the fixture report, with no error and no request" do
    path = write_page("report", JSON.parse(File.read(FIXTURE)))
    assert_rendered_cleanly(*open_page(path))
    screenshot(path, "report")
  end

  it "draws a crowded report: 36 configurations, one all failed, missing intervals and timelines" do
    path = write_page("crowded", crowded_document)
    assert_rendered_cleanly(*open_page(path))
    screenshot(path, "crowded")
  end

  it "draws a report of one configuration measured once (no interval, no comparison)" do
    doc = JSON.parse(File.read(FIXTURE))
    config = doc["configs"].first.merge("batches" => 1, "rps_ci95" => nil, "rps_per_batch" => [3984.7],
                                        "ratio_ci95" => nil, "verdict" => "too few batches")
    doc["configs"] = [config]
    doc["trials"] = [doc["trials"].find { |t| t["config_id"] == config["id"] }]
    path = write_page("single", doc)
    assert_rendered_cleanly(*open_page(path))
  end

  it "draws the document Rackbench::Report computes from a results database" do
    dir = Dir.mktmpdir
    doc = Rackbench::Store.open(dir) do |store|
      configs = [["ruby", 1], ["ruby", 4], ["ruby-yjit", 1], ["ruby-yjit", 4]].each_with_index.to_h do |(ruby, threads), i|
        [ReportStore.dims(ruby: ruby, threads: threads), ReportStore.noisy(1000 * (1 + i * 0.1), 0.02, 3, i).push(nil)]
      end
      ReportStore.fill(store, configs)
      Rackbench::Report.new(store).to_h
    end
    path = write_page("from-store", doc)
    assert_rendered_cleanly(*open_page(path))
  ensure
    FileUtils.rm_rf(dir)
  end

  it "draws the page chart of a request list, a login without measured requests among the pages" do
    dir = Dir.mktmpdir
    latencies = ->(n, from) { Array.new(n) { |i| from + i * 700 } }
    batch = lambda do |slow|
      EntryResults.result([
                            EntryResults.entry(0, "login", [], first: true, weight: 0),
                            EntryResults.entry(1, "home", latencies.call(300, 120_000 * slow)),
                            EntryResults.entry(2, nil, latencies.call(100, 2_000_000))
                          ])
    end
    doc = Rackbench::Store.open(dir) do |store|
      EntryResults.fill(store, { ReportStore.dims(ruby: "ruby") => [batch.call(1)] * 3,
                                 ReportStore.dims(ruby: "ruby-yjit") => [batch.call(3)] * 3 })
      Rackbench::Report.new(store).to_h
    end
    path = write_page("pages", doc)
    status, dom, stderr = open_page(path)
    assert_rendered_cleanly(status, dom, stderr, chart_ids: CHART_IDS + ["chart-page-latency"])
    screenshot(path, "pages")
  ensure
    FileUtils.rm_rf(dir)
  end

  it "draws the inside section's memory chart of each configuration" do
    doc = JSON.parse(File.read(FIXTURE))
    memory = [[1, 10, "master", 30e6, 31e6], [1, 11, "worker", 50e6, 60e6], [1, 12, "worker", 52e6, nil],
              [2, 20, "master", 30e6, 30.5e6], [2, 21, "worker", 49e6, 58e6]].map do |batch, pid, role, before, after|
      { "batch" => batch, "pid" => pid, "role" => role, "warmup_end_pss_bytes" => before, "window_end_pss_bytes" => after }
    end
    figure = { "median" => 812.0, "mean" => 815.0, "cv" => 0.02, "ci95" => [790.0, 830.0], "per_batch" => [812.0, 818.0],
               "batch_numbers" => [1, 2] }
    doc["configs"].first["inside"] = {
      "agent" => "counting", "batches" => 2, "missing_processes" => 0,
      "figures" => Rackbench::Report::InsideFigures::NAMES.to_h { |n| [n, n == "yjit_ratio" ? nil : figure] },
      "noise" => nil, "memory" => memory, "baseline_id" => nil, "against_baseline" => nil
    }
    path = write_page("inside", doc)
    status, dom, stderr = open_page(path)
    assert_rendered_cleanly(status, dom, stderr, chart_ids: CHART_IDS + ["chart-inside-memory-0"])
    screenshot(path, "inside")
  end

  it "draws the flame graph of a profiled configuration beside every chart" do
    dir = Dir.mktmpdir("rackbench-html-profile")
    doc = Rackbench::Store.open(dir) do |store|
      dims = ReportStore.dims(ruby: "ruby")
      id = ReportStore.fill(store, { dims => [1000, 1010, 990] })
      record = ReportStore.trial(dims, 1, 4, 10.0, nil)
      key = "#{record.key}#profile"
      profile = Rackbench::Profile::Dump.from_results(RealProfiles.work, pid: 1)
      file = Rackbench::Profile::Files.write(dir, key, profile)
      mark = Rackbench::Profile::Settings.new(tool: "stackprof", mode: "object").to_h.merge("file" => file)
      store.save_trial(id, record.with(key: key, load_settings: { "profile" => mark }))
      Rackbench::Report.new(store).to_h
    end
    path = write_page("profile", doc)
    status, dom, stderr = open_page(path)
    assert_rendered_cleanly(status, dom, stderr, chart_ids: CHART_IDS + ["chart-profile-1"])
    assert_includes dom, "RealProfiles::ProfileWork#inner"
    screenshot(path, "profile")
  ensure
    FileUtils.rm_rf(dir)
  end

  it "draws the history page: runs with intervals, a change point and the band it left" do
    dir = Dir.mktmpdir
    Rackbench::Store.open(dir) do |store|
      5.times do |i|
        revision = { "of" => "app", "name" => "own", "commit" => i.to_s * 40, "subject" => "Change #{i}" }
        configs = { ReportStore.dims(ruby: "ruby", threads: 1) => ReportStore.noisy(i >= 3 ? 900 : 1000, 0.01, 5, i),
                    ReportStore.dims(ruby: "ruby", threads: 4) => ReportStore.noisy(4000, 0.01, i == 2 ? 3 : 5, 10 + i) }
        ReportStore.fill(store, configs, name: "bench", labels: Rackbench::Labels.new(given: {}, revisions: [revision]))
      end
    end
    series = Rackbench::Series.new(Rackbench::Series.collect([dir]), figure: Rackbench::Report::BatchFigures.fetch("rps"),
                                                                     options: Rackbench::Report::Options.new)
    doc = series.to_h
    assert_equal [[3], []], doc["configs"].map { |c| c["change_points"].map { |p| p["run"] } }
    path = write_page("history", nil, html: Rackbench::Series::HtmlPage.new(doc).render)
    status, dom, stderr = open_page(path)
    assert_rendered_cleanly(status, dom, stderr, chart_ids: %w[chart-history-1 chart-history-2])
  ensure
    FileUtils.rm_rf(dir)
  end

  # The check above would pass vacuously if a blocked request went
  # unnoticed: a page that asks for an image over the network must report
  # the Content-Security-Policy violation.
  it "reports a request the page is not allowed to make" do
    html = Rackbench::HtmlReport.new(JSON.parse(File.read(FIXTURE))).render
    path = write_page("tripwire", nil, html: html.sub("</footer>", '</footer><img src="http://127.0.0.1:9/x.png">'))
    status, = open_page(path)
    assert(status["errors"].any? { |e| e.start_with?("CSP blocked img-src") }, status["errors"].inspect)
  end
end
