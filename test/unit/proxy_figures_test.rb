# frozen_string_literal: true

require "test_helper"

# A proxied configuration's figures over its ok batches (Report::ProxyFigures):
# the hit ratio pooled over the batches' lookups, the proxy's CPU in cores
# (median), its peak memory (largest), and requests a day.
describe Rackbench::Report::ProxyFigures do
  figures = Rackbench::Report::ProxyFigures

  def record(proxy)
    Rackbench::Trial::Record.new(key: "k", kind: "http", status: "ok", proxy: proxy)
  end

  let(:batches) do
    [record("sample" => { "cpu_user_s" => 0.2, "cpu_system_s" => 0.2, "duration_s" => 2.0, "pss_peak_bytes" => 7e6 },
            "cache" => { "hits" => 90, "misses" => 10 }),
     record("sample" => { "cpu_user_s" => 0.6, "cpu_system_s" => 0.4, "duration_s" => 2.0, "rss_peak_bytes" => 9e6 },
            "cache" => { "hits" => 890, "misses" => 10 }),
     record("sample" => { "cpu_user_s" => 0.3, "cpu_system_s" => 0.3, "duration_s" => 2.0, "pss_peak_bytes" => 8e6 },
            "cache" => { "hits" => 0, "misses" => 0, "uncached" => 5 })]
  end

  it "pools the hit ratio, takes the median CPU in cores and the largest memory" do
    assert_in_delta 980.0 / 1000, figures.hit_ratio(batches)
    assert_in_delta 0.3, figures.cpu_cores(batches)
    assert_equal 9e6, figures.memory_peak_bytes(batches)
    assert_equal 86_400 * 3295.0, figures.requests_per_day(3295.0)
  end

  it "has none of them without a proxy, and no hit ratio without a cache" do
    plain = [record(nil), record(nil)]
    assert_nil figures.hit_ratio(plain)
    assert_nil figures.cpu_cores(plain)
    assert_nil figures.memory_peak_bytes(plain)
    assert_nil figures.hit_ratio([record("sample" => { "duration_s" => 1.0 }, "cache" => nil)])
    assert_nil figures.requests_per_day(nil)
  end
end

# The views show the proxy's columns only when a configuration ran behind
# a proxy (the cache's only with a cache); requests/day is in the page and
# JSON always.
describe "the proxy's columns in the reports" do
  require_relative "../support/report_store"

  let(:dir) { Dir.mktmpdir("rackbench-proxy-columns") }
  after { FileUtils.rm_rf(dir) }

  def report(proxy)
    Rackbench::Store.open(dir) do |store|
      ReportStore.fill(store, { ReportStore.dims(ruby: "a") => [100, 101, 99] },
                       fields: ->(_, _, _) { proxy ? { proxy: proxy } : {} })
      Rackbench::Report.new(store)
    end
  end

  def terminal(report)
    Rackbench::Report::Terminal.new(report).render.lines.grep(/\A\|/)[1]
  end

  def html(report)
    Rackbench::HtmlReport::Tables.new(Rackbench::HtmlReport::Document.new(report.to_h)).configs
  end

  it "leaves them out without a proxy, requests/day aside" do
    plain = report(nil)
    refute_match(/hits|proxy CPU|proxy mem|req\/day/, terminal(plain))
    refute_match(/cache hits|proxy CPU|proxy memory/, html(plain))
    assert_includes html(plain), "requests/day"
    entry = plain.to_h["configs"].first
    assert_nil entry["cache_hit_ratio"]
    assert_equal 100 * 86_400, entry["requests_per_day"]
  end

  it "shows them behind a caching proxy, and the hit ratio only with a cache" do
    sample = { "cpu_user_s" => 0.5, "cpu_system_s" => 0.5, "duration_s" => 2.0, "pss_peak_bytes" => 6_000_000 }
    cached = report("sample" => sample, "cache" => { "hits" => 99, "misses" => 1 })
    assert_match(/\| hits +\| proxy CPU \| proxy mem \| req\/day/, terminal(cached))
    assert_match(/99\.0% \| +0\.50 \| +6\.0 MB \|/, Rackbench::Report::Terminal.new(cached).render)
    assert_match(/cache hits.*proxy CPU \(cores\).*proxy memory peak/m, html(cached))

    FileUtils.rm_rf(dir)
    plain_proxy = report("sample" => sample, "cache" => nil)
    refute_match(/hits/, terminal(plain_proxy))
    assert_match(/proxy CPU \| proxy mem \| req\/day/, terminal(plain_proxy))
  end
end
