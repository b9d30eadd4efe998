# frozen_string_literal: true

require "test_helper"
require_relative "../support/report_store"

describe Rackbench::Report do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  def report(configs, **options)
    Rackbench::Store.open(Dir.mktmpdir("results", dir)) do |store|
      ReportStore.fill(store, configs, source_text: options.delete(:source_text), timeline: options.delete(:timeline))
      Rackbench::Report.new(store, **options)
    end
  end

  it "finds a known 3% difference with 2% noise over 20 batches, and none between identical configurations" do
    base = ReportStore.dims(ruby: "old")
    r = report({ base => ReportStore.noisy(1000, 0.02, 20, 1),
                 ReportStore.dims(ruby: "new") => ReportStore.noisy(1030, 0.02, 20, 2),
                 ReportStore.dims(ruby: "same") => ReportStore.noisy(1000, 0.02, 20, 3) })
    verdicts = r.configs.to_h { |c| [c.dims["ruby"], c.verdict] }
    assert_equal({ "old" => "baseline", "new" => "faster", "same" => "no difference detected" }, verdicts)
    same = r.configs.last.to_h
    assert_kind_of Integer, same["batches_needed"]
    assert_operator same["batches_needed"], :>, 20, "2% noise needs more than 20 batches to see 1%"
    new = r.configs[1].to_h
    assert_in_delta 1.03, new["ratio"], 0.02
    assert_operator new["ratio_ci95"][0], :>, 1.0
    assert_nil new["batches_needed"]
  end

  it "summarises each configuration over its ok batches only, flagging failures and outliers" do
    values = [1000, 1010, 990, 1005, 995, 600, nil]
    r = report({ ReportStore.dims(ruby: "a") => values })
    c = r.configs.first.to_h
    assert_equal 6, c["batches"]
    assert_equal 1, c["failed"]
    assert_equal 997.5, c["rps_median"]
    assert_equal [600.0, 1010.0], [c["rps_min"], c["rps_max"]]
    assert_equal [1000.0, 1010.0, 990.0, 1005.0, 995.0, 600.0], c["rps_per_batch"]
    kinds = c["flags"].map { |f| f["kind"] }
    assert_includes kinds, "failed"
    assert_includes kinds, "outlier"
    assert_equal 6, c["flags"].find { |f| f["kind"] == "outlier" }["batch"]
    assert_includes kinds, "high_variance"
    assert_equal "baseline", c["verdict"]
    assert_in_delta 997.5 / 0.03, c["rps_per_gb"], 1e-6
  end

  it "gives no interval or verdict below 5 ok batches, and picks a baseline that has them" do
    r = report({ ReportStore.dims(ruby: "dead") => [nil, nil],
                 ReportStore.dims(ruby: "a") => [1000, 1010, 990, 1005, 995],
                 ReportStore.dims(ruby: "b") => [2000, 2010, 1990] })
    dead, a, b = r.configs.map(&:to_h)
    assert_equal %w[dead a b], r.configs.map { |c| c.dims["ruby"] }
    assert_equal "baseline", a["verdict"]
    assert_equal [nil, nil], dead.values_at("ratio", "ratio_ci95")
    assert_equal ["too few batches", nil, nil], b.values_at("verdict", "rps_ci95", "ratio_ci95")
    assert_in_delta 2.0, b["ratio"], 1e-9
    assert_includes b["flags"].map { |f| f["kind"] }, "too_few_batches"
    assert_equal 5, r.to_h["settings"]["min_batches"]
    three = report({ ReportStore.dims(ruby: "a") => [1000, 1010, 990], ReportStore.dims(ruby: "b") => [2000, 2010, 1990] },
                   min_batches: 3)
    assert_equal "faster", three.configs.last.verdict
  end

  it "merges the batches' latency histograms into percentiles and a curve" do
    r = report({ ReportStore.dims(ruby: "a") => [1000, 1000, 1000] })
    c = r.configs.first.to_h
    engine = ReportStore::ENGINE_RESULT["latency_us"]
    # Three copies of one histogram have that histogram's percentiles.
    assert_in_delta engine["p50"], c["latency_us"]["p50"], engine["p50"] * 0.005
    assert_in_delta engine["p99"], c["latency_us"]["p99"], engine["p99"] * 0.005
    assert_equal engine["max"], c["latency_us"]["max"]
    assert_operator c["latency_curve_us"].size, :>=, 4
    assert_equal c["latency_curve_us"].map(&:first), c["latency_curve_us"].map(&:first).sort
  end

  it "flags a batch whose throughput still rose during the measured window" do
    ramp = (0..9).map { |s| 1000 + 100 * s }
    r = report({ ReportStore.dims(ruby: "a") => [1000, 1000] }, timeline: ramp + [500])
    assert_includes r.configs.first.flags.map { |f| f["kind"] }, "warmup_too_short"
  end

  it "orders configurations as the experiment file does, so the first one written is the baseline" do
    source = <<~YAML
      name: synthetic
      rubies: [zeta, alpha]
      servers: [puma]
      apps: [rack-hello]
      threads: [4, 1]
    YAML
    configs = [%w[alpha 1], %w[alpha 4], %w[zeta 1], %w[zeta 4]].to_h do |ruby, threads|
      [ReportStore.dims(ruby: ruby, threads: Integer(threads)), [1000, 1001]]
    end
    r = report(configs, source_text: source)
    assert_equal [%w[zeta 4], %w[zeta 1], %w[alpha 4], %w[alpha 1]],
                 r.configs.map { |c| [c.dims["ruby"], c.dims["threads"].to_s] }
    assert_equal "baseline", r.configs.first.verdict
    assert_equal %w[ruby threads], r.dimensions
  end

  it "compares along the dimensions a baseline spec names, keeping the others equal" do
    configs = {
      ReportStore.dims(ruby: "a", threads: 1) => [100, 101, 99], ReportStore.dims(ruby: "a", threads: 4) => [400, 401, 399],
      ReportStore.dims(ruby: "b", threads: 1) => [200, 201, 199], ReportStore.dims(ruby: "b", threads: 4) => [400, 402, 398]
    }
    r = report(configs, baseline: "ruby=a")
    by = r.configs.to_h { |c| [[c.dims["ruby"], c.dims["threads"]], c] }
    assert_equal "baseline", by[["a", 1]].verdict
    assert_equal "baseline", by[["a", 4]].verdict
    assert_in_delta 2.0, by[["b", 1]].comparison.ratio, 1e-9
    assert_equal by[["a", 4]], by[["b", 4]].baseline_config
    error = assert_raises(Rackbench::UsageError) { report(configs, baseline: "ruby=c") }
    assert_match(/no configuration has ruby=c \(values: a, b\)/, error.message)
    error = assert_raises(Rackbench::UsageError) { report(configs, baseline: "rubby=a") }
    assert_match(/unknown dimension 'rubby'/, error.message)
  end

  it "documents every key of the report document (doc/output.md) and writes every documented key" do
    r = report({ ReportStore.dims(ruby: "a") => [1000, 1010], ReportStore.dims(ruby: "b") => [900, nil, 905] })
    doc = JSON.parse(JSON.generate(r.to_h))
    text = File.read(File.expand_path("../../doc/output.md", __dir__))[/^## The report document.*/m]
    { "" => doc, "experiment." => doc["experiment"], "settings." => doc["settings"],
      "configs." => doc["configs"][1], "trials." => doc["trials"][0] }.each do |prefix, object|
      documented = text.scan(/^\| `#{Regexp.escape(prefix)}([a-z0-9_]+)`/).flatten.uniq
      assert_equal documented.sort, object.keys.sort, "keys of #{prefix.empty? ? "the document" : prefix}"
    end
    # A configuration entry's keys are Report::Columns' JSON columns,
    # documented in the table's order; the CSV list names the table's CSV
    # columns in order, "one column per dimension" standing for the dims.
    columns = Rackbench::Report::Columns::ALL
    documented = text.scan(/^\| `configs\.([a-z0-9_]+)`/).flatten
    assert_equal columns.select(&:json?).map(&:name), documented, "configs.* in doc/output.md, in order"
    csv_text = text[/^## CSV.*?(?=^## )/m]
    layout = Rackbench::Report::ColumnLayout.new(r.configs.map(&:to_h), dimensions: r.dimensions)
    csv_columns = columns.reject { |c| c.name == "dims" }.flat_map { |c| c.cells(:csv, layout).map(&:heading) }
    assert_equal csv_columns, csv_text.scan(/`([a-z0-9_]+)`/).flatten, "the CSV columns in doc/output.md, in order"
    assert_includes csv_text, "`config_id`, one column per dimension, then"
  end

  it "prints CSV with one row per configuration and a terminal table with verdicts and bars" do
    r = report({ ReportStore.dims(ruby: "a") => [1000, 1010, 990, 1005, 995],
                 ReportStore.dims(ruby: "b") => [2000, 2010, 1990, 2005, 1995] })
    rows = CSV.parse(r.to_csv)
    assert_equal 3, rows.size
    assert_equal %w[config_id ruby server app processes threads batches], rows[0].first(7)
    assert_equal "faster", rows[2][rows[0].index("verdict")]
    text = Rackbench::Report::Terminal.new(r).render
    assert_match(/baseline/, text)
    assert_match(/faster/, text)
    assert_match(/█{30,}/, text, "the faster configuration's bar")
    refute_match(/\e\[/, text, "no colour unless asked")
    refute_match(/MB\/s/, text, "small responses: no bytes column")
  end

  it "shows MB/s in the terminal table when responses are large" do
    r = report({ ReportStore.dims(ruby: "a").merge("app" => "download") => [50, 51, 49, 50, 50] })
    text = Rackbench::Report::Terminal.new(r).render
    assert_match(/\| MB\/s +\|/, text)
    assert_match(/\| +419\.4 \|/, text, "50 responses/s x 8 MiB")
  end
end
