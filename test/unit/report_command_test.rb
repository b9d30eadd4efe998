# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require_relative "../support/report_store"

describe "rackbench report and compare" do
  let(:root) { Dir.mktmpdir }
  after { FileUtils.rm_rf(root) }

  # A results directory holding one experiment with these configurations.
  def results(name, configs)
    dir = File.join(root, name)
    Rackbench::Store.open(dir) { |store| ReportStore.fill(store, configs, name: name) }
    dir
  end

  let(:two_servers) do
    results("servers", { ReportStore.dims(ruby: "ruby", server: "puma") => [1000, 1010, 990, 1005, 995],
                         ReportStore.dims(ruby: "ruby", server: "falcon") => [1500, 1490, 1510, 1505, 1495] })
  end

  it "prints the configurations with verdicts, as a table, JSON and CSV" do
    code, out, = cli("report", "--results", two_servers)
    assert_equal 0, code
    assert_match(/puma .* baseline/, out)
    assert_match(/falcon .* faster/, out)
    code, out, = cli("report", "--results", two_servers, "--json")
    assert_equal 0, code
    doc = JSON.parse(out)
    assert_equal [2, %w[baseline faster]], [doc["format_version"], doc["configs"].map { |c| c["verdict"] }]
    code, out, = cli("report", "--results", two_servers, "--csv", "--baseline", "server=falcon")
    assert_equal 0, code
    rows = CSV.parse(out)
    assert_equal %w[slower baseline], rows.drop(1).map { |r| r[rows[0].index("verdict")] }
  end

  it "prints the per-trial table with --trials" do
    code, out, = cli("report", "--results", two_servers, "--trials")
    assert_equal 0, code
    assert_match(/1510\.0/, out)
  end

  it "gives one line for a bad option value" do
    assert_equal [2, "", "rackbench: --equivalence takes a percentage such as 1% or a fraction such as 0.01, got 'x'\n"],
                 cli("report", "--results", two_servers, "--equivalence", "x")
    code, _, err = cli("report", "--results", two_servers, "--baseline", "server=nginx")
    assert_equal 2, code
    assert_equal "rackbench: baseline: no configuration has server=nginx (values: puma, falcon)\n", err
    code, _, err = cli("report", "--results", two_servers, "--json", "--csv")
    assert_equal [2, "rackbench: choose one of --json, --csv, --csv-pages, --csv-diffs, --trials and --history
"], [code, err]
  end

  it "compares two configurations of one experiment" do
    code, out, = cli("compare", "--results", two_servers, "server=puma", "server=falcon")
    assert_equal 0, code, out
    assert_match(/faster/, out)
    assert_match(/1\.500/, out)
    code, out, = cli("compare", "--results", two_servers, "server=puma", "server=falcon", "--json")
    pair = JSON.parse(out).first
    assert_equal %w[faster all], [pair["verdict"], pair["label"]]
    code, _, err = cli("compare", "--results", two_servers, "server=thin", "server=falcon")
    assert_equal [2, "rackbench: no configuration matches 'server=thin'\n"], [code, err]
  end

  it "compares two experiments in two results directories, pairing configurations whatever the ruby label" do
    before = results("before", { ReportStore.dims(ruby: "ruby", threads: 1) => [100, 101, 99, 100.5, 99.5],
                                 ReportStore.dims(ruby: "ruby", threads: 4) => [400, 401, 399, 400.5, 399.5] })
    after = results("after", { ReportStore.dims(ruby: "patched", threads: 1) => [100, 100.5, 99.5, 101, 99],
                               ReportStore.dims(ruby: "patched", threads: 4) => [480, 481, 479, 480.5, 479.5] })
    code, out, = cli("compare", before, after, "--json")
    assert_equal 0, code
    pairs = JSON.parse(out)
    assert_equal ["threads=1", "threads=4"], pairs.map { |p| p["label"] }
    assert_equal "faster", pairs[1]["verdict"]
    assert_in_delta 1.2, pairs[1]["ratio"], 1e-9
    refute_equal "faster", pairs[0]["verdict"]
  end

  it "refuses two results directories made on different machines, unless --different-machines, then says so" do
    machine = { "hostname" => "bench1", "cpu_model" => "Intel(R) Xeon(R) Platinum 8375C", "cpu_count" => 2,
                "kernel" => "6.1.0-26-cloud-amd64", "governor" => "performance" }
    dirs = [["before", machine], ["after", machine.merge("cpu_count" => 8, "governor" => "powersave")]].map do |name, env|
      results(name, { ReportStore.dims(ruby: "ruby") => [100, 101, 99, 100, 102] }).tap do |dir|
        Rackbench::Store.open(dir) { |store| store.db[:experiments].update(environment: JSON.generate(env)) }
      end
    end
    code, out, err = cli("compare", *dirs)
    assert_equal [2, ""], [code, out]
    assert_equal "rackbench: A and B ran on different machines (cpu_count: 2 (A) vs 8 (B); governor: performance (A) " \
                 "vs powersave (B)): their ratio would measure the machines too; pass --different-machines to " \
                 "compare them anyway\n", err
    code, out, = cli("compare", *dirs, "--different-machines")
    assert_equal 0, code
    assert_match(/\AMACHINES DIFFER: A and B ran on different machines \(cpu_count: 2 \(A\) vs 8 \(B\); governor: /, out)
    code, out, = cli("compare", *dirs, "--different-machines", "--json")
    assert_equal 0, code
    assert_equal [{ "key" => "cpu_count", "a" => 2, "b" => 8 }, { "key" => "governor", "a" => "performance", "b" => "powersave" }],
                 JSON.parse(out).first["machines_differ"]
  end

  it "pairs an experiment that adds a one-valued dimension with the one without it" do
    before = results("plain", { ReportStore.dims(ruby: "ruby") => [100, 101, 99, 100, 102] })
    after = results("arena", { ReportStore.dims(ruby: "ruby").merge("env.MALLOC_ARENA_MAX" => "2") =>
                                [110, 111, 109, 110, 112] })
    code, out, = cli("compare", before, after)
    assert_equal 0, code, out
    assert_match(/faster/, out)
    assert_match(/B: experiment arena .* with env\.MALLOC_ARENA_MAX=2/, out)
  end
end
