# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/report_store"

# Report::Compare without the CLI: pairing configurations of one report,
# pairing two experiments' configurations, and the comparison document.
describe Rackbench::Report::Compare do
  let(:root) { Dir.mktmpdir }
  after { FileUtils.rm_rf(root) }

  def report(name, configs, **options)
    Rackbench::Store.open(File.join(root, name)) do |store|
      ReportStore.fill(store, configs, name: name)
      Rackbench::Report.new(store, **options)
    end
  end

  let(:servers) do
    report("servers", { ReportStore.dims(ruby: "ruby", server: "puma") => [1000, 1010, 990, 1005, 995],
                        ReportStore.dims(ruby: "ruby", server: "falcon") => [1500, 1490, 1510, 1505, 1495],
                        ReportStore.dims(ruby: "yjit", server: "puma") => [1000, 1011, 990, 1005, 995],
                        ReportStore.dims(ruby: "yjit", server: "falcon") => [1001, 1012, 990, 1004, 995] })
  end

  it "pairs every configuration matching A with the one that differs only by B's values" do
    compare = Rackbench::Report::Compare.configurations(servers, "server=puma", "server=falcon")
    assert_equal [["ruby=ruby", "puma", "falcon"], ["ruby=yjit", "puma", "falcon"]],
                 compare.pairs.map { |p| [p.label, p.a.dims["server"], p.b.dims["server"]] }
    doc = JSON.parse(JSON.generate(compare.to_a))
    assert_equal %w[label a b ratio ratio_ci95 verdict verdict_explanation batches_needed entries inside machines_differ
                    gems_differ flags diffs], doc[0].keys
    assert_nil doc[0]["diffs"], "no instructions, no profile: nothing to say where the time went"
    assert_nil doc[0]["entries"], "no request list: no pages to compare"
    assert_equal %w[id dims batches rps_median rps_ci95 rps_per_batch flags], doc[0]["a"].keys
    assert_equal ["faster", "no difference detected"], doc.map { |p| p["verdict"] }
    assert_in_delta 1.5, doc[0]["ratio"], 1e-9
    assert_kind_of Integer, doc[1]["batches_needed"]
    assert_equal %w[server=puma server=falcon], [compare.a_name, compare.b_name]
  end

  it "labels a pair 'all' when the specs name every varying dimension" do
    compare = Rackbench::Report::Compare.configurations(servers, "ruby=ruby server=puma", "ruby=yjit server=falcon")
    assert_equal ["all"], compare.pairs.map(&:label)
  end

  it "judges with the report's options" do
    three = { ReportStore.dims(ruby: "a") => [1000, 1010, 990], ReportStore.dims(ruby: "b") => [1500, 1490, 1510] }
    verdicts = lambda do |report|
      Rackbench::Report::Compare.configurations(report, "ruby=a", "ruby=b").to_a.map { |p| p["verdict"] }
    end
    assert_equal ["faster"], verdicts.call(report("three", three, min_batches: 3))
    assert_equal ["too few batches"], verdicts.call(report("five", three))
  end

  it "names what does not match in one line" do
    compare = Rackbench::Report::Compare
    error = assert_raises(Rackbench::UsageError) { compare.configurations(servers, "server=thin", "server=falcon") }
    assert_equal "no configuration matches 'server=thin'", error.message
    error = assert_raises(Rackbench::UsageError) { compare.configurations(servers, "server=puma", "server=thin") }
    assert_equal "no configuration matching 'server=puma' has a partner matching 'server=thin'", error.message
    error = assert_raises(Rackbench::UsageError) { compare.configurations(servers, "server=puma", "bogus=1") }
    assert_equal "'bogus=1' is not dimension=value (dimensions: ruby, server, app, processes, threads)", error.message
  end

  it "pairs two experiments without the dimension that changed between them" do
    before = report("before", { ReportStore.dims(ruby: "ruby", threads: 1) => [100, 101, 99, 100.5, 99.5],
                                ReportStore.dims(ruby: "ruby", threads: 4) => [400, 401, 399, 400.5, 399.5] })
    after = report("after", { ReportStore.dims(ruby: "patched", threads: 4) => [480, 481, 479, 480.5, 479.5],
                              ReportStore.dims(ruby: "patched", threads: 8) => [480, 481, 479, 480.5, 479.5] })
    assert_equal ["ruby"], Rackbench::Report::Compare.changed_dimensions(before, after)
    compare = Rackbench::Report::Compare.experiments(before, after)
    assert_equal ["threads=4"], compare.pairs.map(&:label), "threads=1 and threads=8 have no partner"
    assert_match(/\Aexperiment before \(id 1, .*before.*\) with ruby=ruby\z/, compare.a_name)
    assert_match(/\Aexperiment after \(id 1, .*after.*\) with ruby=patched\z/, compare.b_name)
    text = compare.terminal_table
    assert_match(/\| threads=4 +\| +400\.0 \| +480\.0 \| +1\.200 \| 1\.19\d–1\.20\d \| faster +\|/, text)
    assert text.end_with?("A: #{compare.a_name}\nB: #{compare.b_name}\n")
    other = report("other", { ReportStore.dims(ruby: "ruby", threads: 2) => [100, 101, 99, 100, 102],
                              ReportStore.dims(ruby: "ruby", threads: 16) => [100, 101, 99, 100, 102] })
    error = assert_raises(Rackbench::UsageError) { Rackbench::Report::Compare.experiments(before, other) }
    assert_match(/\Athe two experiments have no configuration in common \(before: .*; other: .*\)\z/, error.message)
  end

  it "counts messages for micro-benchmarks" do
    micro = report("micro", { ReportStore.dims(ruby: "a").merge("app" => "micro-fibers") => [100, 101, 99, 100, 102],
                              ReportStore.dims(ruby: "b").merge("app" => "micro-fibers") => [110, 111, 109, 110, 112] })
    compare = Rackbench::Report::Compare.configurations(micro, "ruby=a", "ruby=b")
    assert_equal "msg/s", compare.rate_unit
    assert_match(/\| configuration \| A msg\/s \| B msg\/s \|/, compare.terminal_table)
    assert_equal "req/s", Rackbench::Report::Compare.configurations(servers, "server=puma", "server=falcon").rate_unit
  end
end
