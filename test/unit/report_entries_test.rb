# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/entry_results"

# Per-entry results of a request list (Report::EntrySummary), from
# fabricated engine documents: what each configuration's entries add up
# to, and the page_errors flag.
describe Rackbench::Report::EntrySummary do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  let(:dims) { ReportStore.dims(ruby: "a") }

  # Latencies (ns) from +from+ in steps, n of them.
  def latencies(n, from, step)
    Array.new(n) { |i| from + i * step }
  end

  # A batch: a named login (first), an unnamed page and a named list.
  def batch(login: 10, page: 30, list: 60, tls: 0, offset: 0, login_warmup: nil)
    EntryResults.result([
      EntryResults.entry(0, "login", latencies(login, 900_000 + offset, 1_000), first: true,
                         status: { "200" => login - 1, "303" => 1 }, hops: 1, warmup: login_warmup),
      EntryResults.entry(1, nil, latencies(page, 200_000 + offset, 3_000), errors: { "tls" => tls }),
      EntryResults.entry(2, "list", latencies(list, 50_000 + offset, 500), weight: 6)
    ])
  end

  def entries_of(report)
    report.configs.first.to_h["entries"]
  end

  it "sums each entry's counts over the ok batches, in file order, with its share of the mix" do
    r = EntryResults.report(dir, { dims => [batch(tls: 2), batch(login: 12, page: 28, list: 70)] })
    login, page, list = entries_of(r)
    assert_equal [0, 1, 2], [login, page, list].map { |e| e["index"] }
    assert_equal ["login", nil, "list"], [login, page, list].map { |e| e["name"] }
    assert_equal %w[login #1 list], [login, page, list].map { |e| e["label"] }, "an unnamed entry is #INDEX"
    assert_equal [true, false, false], [login, page, list].map { |e| e["first"] }
    assert_equal 6, list["weight"]
    assert_equal [22, 58, 130], [login, page, list].map { |e| e["requests"] }
    assert_equal({ "200" => 20, "303" => 2 }, login["status"])
    assert_equal 2, login["hops"]
    assert_equal 2, page["errors"]["tls"], "an error kind the report does not know is kept"
    assert_equal 2, page["failed"]
    assert_in_delta 2.0 / 60, page["error_rate"], 1e-12
    assert_in_delta 1.0, [login, page, list].sum { |e| e["share"] }, 1e-12
    assert_in_delta 130.0 / 210, list["share"], 1e-12
    assert_equal [30.0, 35.0], list["rps_per_batch"], "entry requests / duration_s (2 s) per batch"
    assert_in_delta 32.5, list["rps_median"], 1e-12
    assert_nil list["rps_ci95"], "2 batches: no interval"
    assert_equal({ "requests" => 20, "failed" => 0, "status" => { "200" => 20 }, "errors" => {} }, login["warmup"])
    # The entries' sums are the configuration's own counts.
    assert_equal r.configs.first.ok_trials.sum { |t| t.record.requests }, [login, page, list].sum { |e| e["requests"] }
  end

  it "merges an entry's histograms across batches exactly as one histogram of both batches" do
    first = latencies(500, 100_000, 137)
    second = latencies(700, 180_000, 911)
    docs = [first, second].map { |l| EntryResults.result([EntryResults.entry(0, "only", l)]) }
    r = EntryResults.report(dir, { dims => docs })
    both = Rackbench::Stats::LatencyHistogram.new(EntryResults.histogram(first + second))
    expected = both.percentiles_us([50, 90, 99, 99.9]).transform_keys { |k| k.tr(".", "_") }
    got = entries_of(r).first["latency_us"]
    # Percentiles come from the buckets: exact. The mean merges by Chan's
    # formula, equal to the direct mean up to rounding.
    assert_equal expected.except("mean"), got.except("mean")
    assert_in_delta expected["mean"], got["mean"], expected["mean"] * 1e-12
    merged = r.configs.first.entries.first.histogram
    assert_equal both.buckets, merged.buckets
    assert_equal [both.total, both.min_ns, both.max_ns], [merged.total, merged.min_ns, merged.max_ns]
    assert_in_delta both.m2_ns2, merged.m2_ns2, both.m2_ns2 * 1e-9
    # One entry is the whole mix: its latency is the configuration's.
    assert_equal r.configs.first.to_h["latency_us"], entries_of(r).first["latency_us"]
  end

  it "gives the median's bootstrap interval from min_batches ok batches, as the configuration's" do
    docs = [60, 62, 58, 61, 59].map { |n| batch(list: n) }
    r = EntryResults.report(dir, { dims => docs })
    list = entries_of(r).last
    expected = Rackbench::Stats.bootstrap_ci([30.0, 31.0, 29.0, 30.5, 29.5], statistic: :median, confidence: 0.95,
                                                                              resamples: 10_000, seed: 1)
    assert_equal expected, list["rps_ci95"]
    assert_in_delta 30.0, list["rps_median"], 1e-12
  end

  it "has no entries, and no page flag, for a single URL" do
    r = EntryResults.report(dir, { dims => [EntryResults.result(nil), EntryResults.result(nil)] })
    config = r.configs.first
    assert_nil config.entries
    assert config.to_h.key?("entries")
    assert_nil config.to_h["entries"]
    refute_includes config.flags.map { |f| f["kind"] }, "page_errors"
  end

  describe "page_errors" do
    def kinds(report)
      report.configs.first.flags.map { |f| f["kind"] }
    end

    def page_flags(report)
      report.configs.first.flags.select { |f| f["kind"] == "page_errors" }
    end

    it "flags a login that failed in the warmup, on its own entry, and nothing when it did not" do
      failing = { "requests" => 4, "status" => { "422" => 4 }, "errors" => EntryResults::KNOWN_ERRORS.dup }
      bad = EntryResults.report(dir, { dims => [batch(login_warmup: failing), batch] })
      flags = page_flags(bad)
      assert_equal ["login"], flags.map { |f| f["entry"] }
      assert_match(/page login: 4 of 14 warmup requests failed \(422: 4\)/, flags.first["message"])
      login = entries_of(bad).first
      assert_equal({ "requests" => 14, "failed" => 4, "status" => { "200" => 10, "422" => 4 }, "errors" => {} },
                   login["warmup"])
      ok = EntryResults.report(dir, { dims => [batch, batch] })
      refute_includes kinds(ok), "page_errors"
    end

    it "flags a page failing above the limit while the whole mix stays under it, naming the page" do
      # 2 of 60 (3.3%) on the unnamed page; 2 of 100 (2%)... of the mix: over 1% on both.
      # 1 of 120 on the page (0.8%) is under the limit.
      high = EntryResults.report(dir, { dims => [batch(page: 60, list: 3000, tls: 2)] })
      flag = page_flags(high).first
      assert_equal "#1", flag["entry"]
      assert_match(/page #1: 2 of 62 requests failed \(tls: 2, limit 1%\)/, flag["message"])
      assert_operator high.configs.first.error_rate, :<, 0.01, "the mix as a whole is under 1%"
      low = EntryResults.report(dir, { dims => [batch(page: 120, tls: 1)] })
      assert_empty page_flags(low)
      # An explicit limit wins over the app's, on both sides.
      assert_empty page_flags(EntryResults.report(dir, { dims => [batch(page: 60, list: 3000, tls: 2)] },
                                                  max_error_rate: 0.05))
      strict = EntryResults.report(dir, { dims => [batch(page: 120, tls: 1)] }, max_error_rate: 0.001)
      assert_equal ["#1"], page_flags(strict).map { |f| f["entry"] }
      assert_match(/limit 0\.1%/, page_flags(strict).first["message"])
      assert_equal 0.001, strict.to_h["settings"]["max_error_rate"]
      assert_nil high.to_h["settings"]["max_error_rate"]
    end

    it "takes a built-in app's own limit (errors allows 10%)" do
      errors_app = dims.merge("app" => "errors")
      r = EntryResults.report(dir, { errors_app => [batch(page: 60, list: 3000, tls: 2)] })
      assert_in_delta 0.1, r.configs.first.max_error_rate, 1e-12
      assert_empty page_flags(r)
      assert_in_delta 0.01, EntryResults.report(dir, { dims => [batch] }).configs.first.max_error_rate, 1e-12
    end
  end

  it "documents every key of an entry in doc/output.md (configs.entries)" do
    r = EntryResults.report(dir, { dims => [batch] })
    text = File.read(File.expand_path("../../doc/output.md", __dir__))
    row = text.lines.find { |line| line.start_with?("| `configs.entries` |") }
    refute_nil row
    entries_of(r).first.each_key { |key| assert_includes row, "`#{key}`", "configs.entries.#{key} is documented" }
    flags_row = text.lines.find { |line| line.start_with?("| `configs.flags` |") }
    assert_includes flags_row, "`page_errors`"
  end
end
