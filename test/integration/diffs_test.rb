# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"
require "support/test_rubies"

# Where the time went, end to end with real valgrind and real rubies:
# Ruby 3.4.5 built from source against the same build with extra work in
# rb_hash_aset (test/support/test_rubies.rb's PATCHED: 300 spins a call),
# rack-hello on Puma 1x1, 3 batches of instructions trials with the cache
# simulation (2 leave Welch's interval one degree of freedom: at the
# family's confidence, thousands of standard errors wide). The report's function diff puts rb_hash_aset first, with
# more than 90% of the whole difference, its interval clear of 0, its
# calls counted and the same calls on both sides; the differential call
# tree colours the path to it; the gate's Markdown names it under the
# regression; estimated cycles come beside instructions. Some 5 to 10
# minutes on a quiet machine (six servers booted under valgrind, each
# window 150 requests under instrumentation and cache simulation), 15 to
# 25 under a load average of 30.
describe "where the time went (integration)" do
  before { require_engine! }

  def self.outcome
    @outcome ||= begin
      dir = Dir.mktmpdir("rackbench-diffs")
      stock = TestRubies.ruby("3.4")
      patched = TestRubies.patched.path
      file = File.join(dir, "diffs.yml")
      File.write(file, <<~YAML)
        name: diffs-integration
        seed: 1
        batches: 3
        rubies:
          - { name: stock, ruby: #{stock} }
          - { name: patched, ruby: #{patched} }
        servers: [puma]
        apps: [rack-hello]
        processes: 1
        threads: 1
        measure: instructions
        instructions: { cache_sim: true }
        load: { count: 150, warmup_count: 1000, timeout: 10s }
      YAML
      results = File.join(dir, "results")
      env = { "RACKBENCH_CACHE" => File.join(dir, "cache") }
      exe = File.expand_path("../../exe/rackbench", __dir__)
      run = Open3.capture3(env, RbConfig.ruby, exe, "run", file, "--results", results)
      report = Open3.capture3(env, RbConfig.ruby, exe, "report", "--json", "--results", results, "--baseline", "ruby=stock")
      gate = Open3.capture3(env, RbConfig.ruby, exe, "gate", "--results", results, "--baseline", "ruby=stock",
                            "--min-batches", "3", "--fail-on", "instructions>1%", "--markdown", "-")
      { dir: dir, run: run, report: report, gate: gate }
    end
  end

  Minitest.after_run { FileUtils.rm_rf(outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }
  let(:document) do
    out, err, status = outcome[:report]
    assert status.success?, err
    JSON.parse(out)
  end
  let(:entry) { document.fetch("diffs").first }

  it "puts rb_hash_aset first, with more than 90% of the difference, the same calls and more work per call" do
    _, err, status = outcome[:run]
    assert status.success?, err
    functions = entry.fetch("functions")
    first = functions["rows"].first
    assert_equal "rb_hash_aset", first["name"], functions["rows"].first(5).map { |r| r["name"] }.inspect
    assert_operator first["share"], :>, 0.9
    assert first["changed"], "its interval excludes 0: #{first["difference_ci"]}"
    assert_operator first["a_calls"], :>, 0
    assert_in_delta first["a_calls"], first["b_calls"], first["a_calls"] * 0.01, "the patch adds work, not calls"
    # 300 spins of a volatile counter: a few instructions each.
    assert_operator first["per_call_difference"], :>, 900
    assert_operator first["per_call_difference"], :<, 3000
    assert functions["inclusive"]
    assert functions["cycles"], "both sides ran the cache simulation"
    assert_operator first["cycles_difference"], :>, 0
  end

  it "colours the path to rb_hash_aset in the differential call tree" do
    nodes = entry.fetch("call_tree")
    hot = nodes.select { |node| node["name"] == "rb_hash_aset" }
    refute_empty hot
    # rb_hash_aset is reached through many C callers; the tree keeps the
    # costliest paths, whose rb_hash_aset nodes carried a third of its
    # difference in every run here (16,753 and 17,110 of about 50,500).
    assert_operator hot.sum { |node| node["delta"] }, :>, 0.25 * entry["functions"]["rows"].first["difference"]
    # Its callers up to the root carry the change too.
    parent = nodes[hot.max_by { |node| node["delta"] }["parent"]]
    assert_operator parent["delta"], :>, 0
  end

  it "gives estimated cycles per request beside instructions, each configuration with its verdict" do
    patched = document["configs"].find { |c| c["dims"]["ruby"] == "patched" }
    assert_operator patched.dig("cycles", "per_request", "median"), :>, patched.dig("instructions", "per_request", "median")
    assert_operator patched.dig("cycles", "against_baseline", "ratio"), :>, 1
  end

  it "names the functions under the regression in the gate's Markdown, in under 15 lines" do
    out, err, status = outcome[:gate]
    assert_equal 3, status.exitstatus, err
    block = out[/\*\*Where the time went\*\*.*?\n\n.*?(?=\n\n)/m]
    assert block, out
    assert_operator block.lines.size, :<, 15
    assert_match(/\A\| rb\\_hash\\_aset \\\* \|/, block.lines.grep(/\A\| (?!function|---)/).first)
  end
end
