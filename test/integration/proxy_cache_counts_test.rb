# frozen_string_literal: true

require "test_helper"
require "json"

# The cache's hits and misses over the window, from the proxy's own
# records: nginx's access log between two byte marks, varnishstat's
# counters at both marks; and the hit ratio over them.
describe Rackbench::Proxy::CacheCounts do
  let(:dir) { Dir.mktmpdir("rackbench-cache-counts") }
  after { FileUtils.rm_rf(dir) }

  it "counts the access-log lines written between the marks, a line still being written left out" do
    log = File.join(dir, "access.log")
    counter = Rackbench::Proxy::CacheCounts::AccessLog.new(log)
    assert_equal 0, counter.mark, "no log yet"
    File.write(log, "MISS 200\nHIT 200\n")
    mark = counter.mark
    File.write(log, "HIT 200\nHIT 200\nEXPIRED 200\n- 303\nSTALE 200\nBYPASS 200\nHIT 2", mode: "a")
    counts = counter.since(mark)
    assert_equal({ "hits" => 3, "misses" => 2, "uncached" => 1,
                   "statuses" => { "-" => 1, "BYPASS" => 1, "EXPIRED" => 1, "HIT" => 2, "STALE" => 1 } }, counts)
    assert_in_delta 0.6, Rackbench::Proxy::CacheCounts.hit_ratio(counts)
    assert_equal 0, Rackbench::Proxy::CacheCounts::AccessLog.new(File.join(dir, "none")).since(0)["hits"]
  end

  it "reads varnishstat's counters in both JSON layouts and subtracts the first mark" do
    nested = { "version" => 1, "counters" => { "MAIN.cache_hit" => { "value" => 12 },
                                               "MAIN.cache_miss" => { "value" => 3 } } }
    flat = { "timestamp" => "x", "MAIN.cache_hit" => { "value" => 5 }, "MAIN.s_pass" => { "value" => 2 } }
    assert_equal({ "hits" => 12, "misses" => 3, "uncached" => 0 },
                 Rackbench::Proxy::CacheCounts::Varnishstat.parse(JSON.generate(nested)))
    assert_equal({ "hits" => 5, "misses" => 0, "uncached" => 2 },
                 Rackbench::Proxy::CacheCounts::Varnishstat.parse(JSON.generate(flat)))

    stat = File.join(dir, "varnishstat")
    File.write(stat, "#!/bin/sh\ncat #{dir}/counters.json\n")
    File.chmod(0o755, stat)
    File.write(File.join(dir, "counters.json"), JSON.generate(nested))
    counter = Rackbench::Proxy::CacheCounts::Varnishstat.new(stat, dir)
    mark = counter.mark
    nested["counters"]["MAIN.cache_hit"]["value"] = 112
    nested["counters"]["MAIN.cache_miss"]["value"] = 4
    File.write(File.join(dir, "counters.json"), JSON.generate(nested))
    counts = counter.since(mark)
    assert_equal [100, 1, 0], counts.values_at("hits", "misses", "uncached")
  end

  it "says why varnishstat gave nothing" do
    counter = Rackbench::Proxy::CacheCounts::Varnishstat.new(File.join(dir, "absent"), dir)
    assert_match(/\Acannot run varnishstat: /, assert_raises(Rackbench::Error) { counter.mark }.message)
  end

  it "has no hit ratio without a lookup or a cache" do
    assert_nil Rackbench::Proxy::CacheCounts.hit_ratio(nil)
    assert_nil Rackbench::Proxy::CacheCounts.hit_ratio("hits" => 0, "misses" => 0, "uncached" => 7)
    assert_equal 1.0, Rackbench::Proxy::CacheCounts.hit_ratio("hits" => 4, "misses" => 0)
  end
end
