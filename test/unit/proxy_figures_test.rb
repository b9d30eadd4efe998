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
