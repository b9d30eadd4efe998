# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require_relative "../support/report_store"
require "rackbench/cli"
require "rackbench/cli/gate_options"

# `rackbench gate` and `compare --fail-on` through CLI.run, over stored
# records: each exit code, the Markdown file, the JSON document, and the
# exit codes' table in doc/ci.md.
describe "rackbench gate (CLI)" do
  let(:root) { Dir.mktmpdir("rackbench-gate-cli") }
  after { FileUtils.rm_rf(root) }

  def store(name, configs, labels: nil)
    dir = File.join(root, name)
    Rackbench::Store.open(dir) { |s| ReportStore.fill(s, configs, name: "bench", labels: labels) }
    dir
  end

  def dims(ruby) = ReportStore.dims(ruby: ruby)
  def noisy(mean, seed) = ReportStore.noisy(mean, 0.01, 6, seed)

  let(:patched) { store("patched", { dims("stock") => noisy(1000, 1), dims("patched") => noisy(900, 2) }) }

  it "exits 3 when a configuration regressed, and writes the summary to post" do
    markdown = File.join(root, "summary.md")
    code, out, = cli("gate", "--results", patched, "--baseline", "ruby=stock", "--fail-on", "slower>2%",
                     "--markdown", markdown)
    assert_equal [3, Rackbench::CLI::EXIT_REGRESSED], [code, code]
    assert_match(/^rackbench gate: regressed: 1 of 1 configuration regressed beyond the thresholds \(exit 3\)$/, out)
    assert_match(/^  patched: requests\/s 1\d(\.\d)?% worse, beyond the 2% limit/, out)
    assert_match(/\| REGRESSED \|/, out)
    text = File.read(markdown)
    assert_match(/^\| ❌ \| patched \| requests\/s \| \d{3,4} \| \d{3} \| −\d+\.\d% \| 0\.\d{3} /, text)
  end

  it "exits 0 when nothing regressed beyond the thresholds" do
    dir = store("aa", { dims("stock") => noisy(1000, 3), dims("patched") => noisy(1000, 4) })
    code, out, err = cli("gate", "--results", dir, "--baseline", "ruby=stock")
    assert_equal [Rackbench::CLI::EXIT_OK, ""], [code, err]
    assert_match(/^rackbench gate: ok: no configuration of 1 regressed beyond the thresholds \(exit 0\)$/, out)
  end

  it "exits 4 when the results cannot say, and says why" do
    dir = store("few", { dims("stock") => noisy(1000, 5), dims("patched") => [900, 910, 905] })
    code, out, = cli("gate", "--results", dir)
    assert_equal Rackbench::CLI::EXIT_CANNOT_SAY, code
    assert_includes out, "rackbench gate: cannot say: 1 of 1 configuration cannot be judged (exit 4)\n" \
                         "  patched: requests/s: candidate has 3 batches; a CI needs at least 5 per side\n"
    code, = cli("gate", "--results", dir, "--min-batches", "3")
    assert_equal Rackbench::CLI::EXIT_REGRESSED, code, "--min-batches judges what it can"
  end

  it "gates a candidate's results directory against a baseline's, as compare --fail-on does" do
    base = store("main", { dims("ruby") => noisy(1000, 6) })
    cand = store("pr", { dims("ruby") => noisy(800, 7) })
    code, out, err = cli("gate", base, cand, "--json")
    assert_equal 3, code
    doc = JSON.parse(out)
    assert_equal ["rackbench-gate", "regressed", 3], doc.values_at("format", "status", "exit_code")
    assert_match(/\Arackbench gate: regressed: .* \(exit 3\)\n  ruby=ruby server=puma app=rack-hello processes=1 threads=4: requests\/s /, err)
    code, out, err = cli("compare", base, cand, "--fail-on", "rps>2%", "--markdown", "-")
    assert_equal 3, code
    assert out.start_with?("## rackbench gate: ❌ regressed"), "only the summary on stdout with --markdown -"
    assert_match(/\Arackbench gate: regressed/, err)
    code, out, = cli("compare", base, cand, "--markdown", File.join(root, "s.md"))
    assert_equal [0, true], [code, File.exist?(File.join(root, "s.md"))], "a gate's exit code only with --fail-on"
    assert_match(/\| ruby=ruby .*\| slower/, out)
    code, = cli("compare", base, cand)
    assert_equal 0, code
  end

  it "cannot say when the two experiments have no configuration in common" do
    threads = ->(n) { ReportStore.dims(ruby: "ruby", threads: n) }
    base = store("main-x", { threads.call(1) => noisy(1000, 12), threads.call(2) => noisy(1000, 14) })
    cand = store("pr-x", { threads.call(8) => noisy(1000, 13), threads.call(16) => noisy(1000, 15) })
    code, out, = cli("gate", base, cand, "--wide") # whole lines: the reasons as one line each
    assert_equal Rackbench::CLI::EXIT_CANNOT_SAY, code
    assert_includes out, "  ruby=ruby server=puma app=rack-hello processes=1 threads=1: not in the candidate: none of its trials ran\n"
    assert_includes out, "  ruby=ruby server=puma app=rack-hello processes=1 threads=16: only in the candidate, not judged\n"
    code, _, err = cli("compare", base, cand)
    assert_equal [Rackbench::CLI::EXIT_USAGE, true], [code, err.include?("no configuration in common")], "compare alone says so"
  end

  it "gates the latest run against the run stored before it with --previous" do
    dir = File.join(root, "history")
    labels = ->(commit) { Rackbench::Labels.new(given: {}, revisions: [{ "of" => "app", "name" => "own", "commit" => commit }]) }
    Rackbench::Store.open(dir) do |s|
      ReportStore.fill(s, { dims("ruby") => noisy(1000, 8) }, name: "bench", labels: labels.call("a" * 40))
      ReportStore.fill(s, { dims("ruby") => noisy(1002, 9) }, name: "bench", labels: labels.call("b" * 40))
    end
    code, out, = cli("gate", "--results", dir, "--previous", "--wide")
    assert_equal 0, code
    assert_match(/^Baseline: experiment bench \(id 1, .*\); app own aaaaaaaaaa$/, out)
    assert_match(/^Candidate: experiment bench \(id 2, .*\); app own bbbbbbbbbb$/, out)
    Rackbench::Store.open(dir) do |s|
      ReportStore.fill(s, { dims("ruby") => noisy(700, 10) }, name: "bench", labels: labels.call("c" * 40))
    end
    assert_equal 3, cli("gate", "--results", dir, "--previous").first
  end

  it "exits 2 for what it cannot read as a gate, in one line" do
    [[%w[gate --fail-on rps<2%], /--fail-on takes FIGURE>PCT/],
     [["gate", "--results", File.join(root, "none")], /no results in/],
     [%w[gate a], /gate takes no argument or two/],
     [["gate", "--results", (dir = store("one", { dims("ruby") => noisy(1000, 11) })), "--previous"],
      /holds no run of experiment 'bench' before id 1 to compare with/],
     [["gate", "--results", dir, "--json", "--markdown", "-"], /both print to standard output/]].each do |argv, message|
      code, _, err = cli(*argv)
      assert_equal Rackbench::CLI::EXIT_USAGE, code, argv.inspect
      assert_match message, err
    end
  end

  it "lists every exit code of the gate in doc/ci.md, with its name" do
    text = File.read(File.expand_path("../../doc/ci.md", __dir__))
    table = text[/## Exit codes\n.*?(?=\n## )/m]
    refute_nil table
    { "EXIT_OK" => 0, "EXIT_REGRESSED" => 3, "EXIT_CANNOT_SAY" => 4, "EXIT_USAGE" => 2, "EXIT_FAILURE" => 1 }
      .each do |name, value|
        assert_equal value, Rackbench::CLI.const_get(name)
        assert_match(/^\| #{value} \| `#{name}` \|/, table)
      end
    Rackbench::CLI::GateOptions::EXIT_CODES.each_value { |code| assert_match(/^\| #{code} \|/, table) }
  end
end
