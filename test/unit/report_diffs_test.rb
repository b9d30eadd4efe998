# frozen_string_literal: true

require "test_helper"
require "json"
require "csv"
require_relative "../support/diff_store"

# Where the time went (Report::Diffs and its parts), as pure functions of
# stored trials: a build whose rb_hash_aset does more work is found
# function by function (the first row, nearly the whole difference, its
# interval clear of 0, its cost per call), its path coloured in the call
# tree; an A/A finds no function changed at the family's confidence; a
# function on one side only is marked; a trial stored before the call
# graph still gives self costs; profiles differ frame by frame; and
# allocations and GC stand beside them.
describe "where the time went" do
  let(:dir) { Dir.mktmpdir("rackbench-diffs") }
  after { FileUtils.rm_rf(dir) }

  let(:stock_dims) { { "ruby" => "stock", "server" => "puma", "app" => "rack-hello", "processes" => 1, "threads" => 1 } }
  let(:patched_dims) { stock_dims.merge("ruby" => "patched") }
  # 1,500 instructions more per call of rb_hash_aset, 30 calls a request.
  let(:patched) { DiffStore::STOCK.merge("rb_hash_aset" => DiffStore::STOCK["rb_hash_aset"] + (30 * 1500)) }
  let(:options) { Rackbench::Report::Options.new }

  def report(configs, **kwargs)
    @n = @n.to_i + 1
    Rackbench::Store.open(File.join(dir, @n.to_s)) do |store|
      fill = %i[batches seed noise time cache_sim]
      DiffStore.fill(store, configs, **kwargs.slice(*fill))
      Rackbench::Report.new(store, **kwargs.except(*fill))
    end
  end

  describe Rackbench::Stats do
    it "gives Student's t quantiles exactly for whole degrees of freedom" do
      { [0.95, 1] => 12.7062, [0.95, 4] => 2.7764, [0.95, 9] => 2.2622, [0.99, 4] => 4.6041,
        [0.9999, 4] => 15.5441, [0.95, 30] => 2.0423 }.each do |(confidence, df), t|
        assert_in_delta t, Rackbench::Stats.student_t_quantile(confidence, df), 1e-3, "#{confidence} df #{df}"
      end
      assert_in_delta 0.95, Rackbench::Stats.student_t_two_sided(2.7764, 4), 1e-5
    end

    it "gives Welch's interval of a difference of means, the difference itself without spread" do
      low, high = Rackbench::Stats.mean_difference_ci([1, 2, 3, 4, 5], [3, 4, 5, 6, 7])
      # Difference 2, standard error 1, 8 degrees of freedom: t 2.306.
      assert_in_delta(-0.306, low, 1e-3)
      assert_in_delta 4.306, high, 1e-3
      assert_equal [1.0, 1.0], Rackbench::Stats.mean_difference_ci([1, 1, 1], [2, 2, 2])
      assert_nil Rackbench::Stats.mean_difference_ci([1.0], [2.0, 3.0])
      wide = Rackbench::Stats.mean_difference_ci([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], confidence: 0.9999)
      assert_operator wide.first, :<, low
    end

    it "marks no function of an A/A changed at the family's confidence, whatever the shape of its counts" do
      rng = Random.new(7)
      shapes = { normal: -> { 1000 + (10 * Math.sqrt(-2 * Math.log(rng.rand)) * Math.cos(2 * Math::PI * rng.rand)) },
                 skewed: -> { 1000 + (50 * -Math.log(rng.rand)) }, whole: -> { 1000.0 + rng.rand(3) } }
      shapes.each do |name, draw|
        batch = -> { (1..300).to_h { |i| [i, draw.call] } }
        rows = Rackbench::Report::DiffRows.new(Array.new(5) { batch.call }, Array.new(5) { batch.call },
                                              a_totals: [1.0] * 5, b_totals: [1.0] * 5, confidence: 0.95)
        assert_equal 0, rows.changed_count, name
        assert_in_delta 1 - (0.05 / 300), rows.confidence, 1e-12
      end
    end
  end

  describe "a build with more work in rb_hash_aset" do
    let(:r) { report({ stock_dims => DiffStore::STOCK, patched_dims => patched }) }
    let(:entry) { r.to_h["diffs"].first }

    it "puts rb_hash_aset first, with nearly the whole difference, its interval clear of 0 and its cost per call" do
      functions = entry["functions"]
      assert_equal [Rackbench::Report.config_id(patched_dims), Rackbench::Report.config_id(stock_dims)],
                   entry.values_at("config_id", "baseline_id")
      first = functions["rows"].first
      assert_equal %w[libruby.so.3.4 rb_hash_aset], first.values_at("object", "name")
      assert_in_delta 45_000, first["difference"], 100
      assert_operator first["share"], :>, 0.9
      assert first["changed"]
      assert_operator first["difference_ci"].first, :>, 0
      assert_in_delta 1500, first["per_call_difference"], 5, "instructions more per call"
      assert_equal 1, functions["changed"], "the other functions' noise is not read as a change"
      assert_equal [5, 5], functions["batches"]
      assert functions["inclusive"]
      vm = functions["rows"].find { |row| row["name"] == "vm_exec_core" }
      assert_in_delta 45_000, vm["inclusive_difference"], 100, "the VM's inclusive cost carries its callee's"
      assert_operator functions["confidence"], :>, 0.99, "the family's confidence over 6 functions"
    end

    it "colours the path to rb_hash_aset in the differential call tree, laid out as B's" do
      nodes = entry["call_tree"]
      root = nodes.first
      assert_equal "all", root["name"]
      assert_in_delta r.configs.last.instructions.median, root["b"], 50
      hot = nodes.select { |node| node["name"] == "rb_hash_aset" }
      refute_empty hot
      assert_in_delta 45_000, hot.sum { |node| node["delta"] }, 200
      assert(nodes.reject { |node| node["parent"].nil? }.all? { |node| node["x1"] - node["x0"] <= nodes[node["parent"]]["b"] + 1e-6 })
      untouched = nodes.find { |node| node["name"] == "rb_str_new" }
      assert_in_delta 0, untouched["delta"], 50
    end

    it "shows the same rows in the terminal, CSV, HTML and the gate's Markdown" do
      text = Rackbench::Report::Terminal.new(r).render
      section = text[/Where the time went.*/m]
      assert_match(/\+4[45],\d{3} instructions per request .* 1 of 6 functions changed/, section)
      assert_match(/\| rb_hash_aset \* +\| libruby.so.3.4 \|/, section)
      csv = CSV.parse(r.to_csv_diffs, headers: true)
      assert_equal entry["functions"]["rows"].size, csv.size
      assert_equal %w[function rb_hash_aset true], csv.first.fields("kind", "name", "changed")
      html = Rackbench::HtmlReport.new(JSON.parse(JSON.generate(r.to_h))).render
      assert_includes html, %(<section id="diffs">)
      assert_includes html, "rb_hash_aset *"
      assert_includes html, %(id="chart-diff-1-calls")
      gate = Rackbench::Gate.within(r, rules: Rackbench::Gate::Rule.parse_all(["instructions>1%"]))
      markdown = Rackbench::Gate::Markdown.new(JSON.parse(JSON.generate(gate.to_h))).render
      block = markdown[/\*\*Where the time went\*\*.*?\n\n.*?(?=\n\n)/m]
      assert block, markdown
      assert_operator block.lines.size, :<, 15
      assert_equal 5, block.lines.grep(/\A\| (?!function|---)/).size, "the five functions under the regression"
      assert_match(/\| rb\\_hash\\_aset \\\* \| 15,00\d \| 60,00\d \| \+45,00\d \| 100\.\d% \|/, block)
    end

    it "compares the same way between two experiments" do
      a = report({ stock_dims => DiffStore::STOCK })
      b = report({ stock_dims => patched }, seed: 2)
      compare = Rackbench::Report::Compare.experiments(a, b)
      doc = JSON.parse(JSON.generate(compare.to_a)).first
      assert_equal "rb_hash_aset", doc.dig("diffs", "functions", "rows", 0, "name")
      text = compare.terminal_table
      assert_match(/^Where the time went: ruby=stock \(B against A\)$/, text)
      assert_match(/^\| rb_hash_aset \* +\|/, text[/Where the time went.*/m])
    end
  end

  it "finds no function changed in an A/A at the family's confidence" do
    r = report({ stock_dims => DiffStore::STOCK, patched_dims => DiffStore::STOCK }, batches: 10, noise: 0.002)
    functions = r.to_h["diffs"].first["functions"]
    assert_equal 0, functions["changed"]
    assert(functions["rows"].all? { |row| row["difference_ci"].first <= 0 && row["difference_ci"].last >= 0 })
  end

  it "marks a function only one side has, and the most a function it lacks could cost" do
    extra = DiffStore::STOCK.merge("rb_spin" => 3000)
    r = report({ stock_dims => DiffStore::STOCK, patched_dims => extra })
    row = r.to_h["diffs"].first["functions"]["rows"].find { |f| f["name"] == "rb_spin" }
    assert_equal ["b", 0.0, true], [row["only"], row["a"], row["changed"]]
    assert_equal "rb_spin (B only) *", Rackbench::Report::DiffText.name(row)
  end

  it "does not mark a function changed for want of a figure: one listed on one side only, near the other's cutoff" do
    a = Array.new(5) { |i| { "near" => 28.0 + (i * 0.1), "big" => 1000.0 + i } }
    b = Array.new(5) { |i| { "big" => 2000.0 + i } }
    rows = Rackbench::Report::DiffRows.new(a, b, a_totals: [1.0] * 5, b_totals: [2.0] * 5, confidence: 0.95,
                                                 a_unlisted: 26.0, b_unlisted: 31.0).rows.to_h { |r| [r.key, r] }
    near = rows["near"]
    assert_equal "a", near.only
    refute near.changed, "B's batches could have held up to 31: #{near.difference_ci}"
    assert_operator near.difference_ci.last, :>=, 0
    assert rows["big"].changed
    listed = Rackbench::Report::DiffRows.new(a, b, a_totals: [1.0] * 5, b_totals: [2.0] * 5, confidence: 0.95).rows
    assert listed.find { |r| r.key == "near" }.changed, "without a cutoff, a missing item is a true 0"
  end

  it "diffs trials stored before the call graph by their costliest functions' self costs" do
    r = report({ stock_dims => DiffStore::STOCK, patched_dims => patched })
    old = r.configs.map { |c| c.instruction_trials.map { |t| t.instructions.except("call_graph") } }
    diff = Rackbench::Report::FunctionDiff.new(*old, options).to_h
    assert_equal "rb_hash_aset", diff["rows"].first["name"]
    refute diff["inclusive"]
    refute diff["rows"].first.key?("inclusive_difference")
    # Without a call graph, what a function missing from a batch cost is
    # below the last of its 60.
    assert_in_delta 2000, diff["unlisted_max"].first, 50
  end

  it "estimates cycles per request with their own verdict, a gate figure and CSV columns" do
    base = report({ stock_dims => DiffStore::STOCK, patched_dims => patched })
    trials = base.configs.map { |c| c.instruction_trials }
    simulate = lambda do |trial, cycles|
      doc = trial.instructions.merge("cache_sim" => { "per_request" => cycles, "model" => Rackbench::Instructions::Cycles::MODEL,
                                                      "ll_hits" => 2000 * 50, "ram_hits" => 2000 * 5 })
      Rackbench::Report::TrialEntry.new(trial.record.with(instructions: doc))
    end
    a = Rackbench::Report::CyclesSummary.of(trials[0].map { |t| simulate.call(t, 250_000 + t.batch) }, options)
    b = Rackbench::Report::CyclesSummary.of(trials[1].map { |t| simulate.call(t, 300_000 + t.batch) }, options)
    doc = b.to_h(baseline: a, baseline_id: "a")
    assert_equal "slower", doc.dig("against_baseline", "verdict")
    assert_in_delta 1.2, doc.dig("against_baseline", "ratio"), 1e-3
    assert_equal({ "ll_hits" => 50.0, "ram_hits" => 5.0 }, doc["misses_per_request"])
    assert_nil Rackbench::Report::CyclesSummary.of(trials[0], options), "no simulation, no cycles"
    assert_equal "cycles", Rackbench::Report::BatchFigures.fetch("cycles_per_request").name
    header = base.to_csv.lines.first
    assert_includes header, "cycles_per_request_median,cycles_per_request_ci95_low"
  end

  it "shows estimated cycles in the terminal and the HTML report, and per function in the diff" do
    r = report({ stock_dims => DiffStore::STOCK, patched_dims => patched }, cache_sim: true)
    text = Rackbench::Report::Terminal.new(r).render
    table = text[/Estimated cycles per request[^\n]*\n(?:.*\n){2,8}/]
    assert table, text
    assert_match(/L1 hits \+ 5 LL hits \+ 35 RAM hits/, table)
    assert_match(/\| patched \| +333,00\d \|.*\| +2,000 \| +100 \| +1\.25\d \|.*\| slower +\| slower +\|/, table)
    html = Rackbench::HtmlReport.new(JSON.parse(JSON.generate(r.to_h))).render
    assert_includes html, %(<section id="cycles">)
    functions = r.to_h["diffs"].first["functions"]
    assert functions["cycles"]
    assert_in_delta 67_500, functions["rows"].first["cycles_difference"], 200
    plain = report({ stock_dims => DiffStore::STOCK, patched_dims => patched })
    refute_match(/Estimated cycles/, Rackbench::Report::Terminal.new(plain).render)
  end

  describe Rackbench::Report::ProfileDiff do
    # A profile of +inner+ and +outer+ samples in Controller#index's
    # callees, over +requests+ requests.
    def batch(inner, outer, requests: 100)
      frames = [{ "name" => "Puma::Server#process", "file" => "/gems/puma-6.4.2/lib/puma/server.rb", "line" => 1 },
                { "name" => "HelloController#index", "file" => "/app/controllers/hello_controller.rb", "line" => 2 },
                { "name" => "Integer#times", "file" => "<cfunc>", "line" => nil }]
      stacks = [[[0, 1, 2], inner], [[0, 1], outer], [[0], 50]].reject { |_, count| count.zero? }
      profile = Rackbench::Profile::Merged.new(tool: "stackprof", mode: "cpu", interval: 1000, frames: frames, stacks: stacks)
      Rackbench::Report::ProfileDiff::Batch.new(profile, requests)
    end

    it "names the frame that grew, per request, with its interval across the profiled trials" do
      a = [batch(0, 100), batch(0, 102), batch(0, 98), batch(0, 101), batch(0, 99)]
      b = [batch(300, 100), batch(310, 101), batch(290, 99), batch(305, 100), batch(295, 102)]
      doc = Rackbench::Report::ProfileDiff.of(a, b, options).to_h
      first = doc["rows"].first
      assert_equal ["Integer#times", "b", true], first.values_at("name", "only", "changed")
      assert_in_delta 3000, first["difference"], 1, "300 samples of 1 ms over 100 requests: 3 ms a request"
      index = doc["rows"].find { |row| row["name"] == "HelloController#index" }
      refute index["changed"], "its own samples did not move"
      assert_in_delta 3000, index["total_difference"], 100, "its total carries the loop"
      assert_equal %w[microseconds stackprof cpu], doc.values_at("unit", "tool", "mode")
      flame = doc["flame"]
      assert_equal "all", flame.first["name"]
      assert_in_delta 3000, flame.find { |node| node["name"] == "HelloController#index" }["delta"], 100
    end

    it "shows the frames in the terminal and the HTML report, with their own flame graph" do
      a = [batch(0, 100), batch(0, 102), batch(0, 98)]
      b = [batch(300, 100), batch(310, 101), batch(290, 99)]
      profile = JSON.parse(JSON.generate(Rackbench::Report::ProfileDiff.of(a, b, options).to_h))
      diff = { "config_id" => "loop", "baseline_id" => "plain", "functions" => nil, "call_tree" => nil,
               "profile" => profile, "allocations" => nil }
      text = Rackbench::Report::DiffsTerminal.new([diff]).render
      assert_match(/stackprof cpu: \+3\.00 ms per request .* over 3 and 3 profiled trials/, text)
      assert_match(/\| Integer#times \(B only\) \* \| <cfunc> +\| +0\.0 µs \| +3\.00 ms \|/, text)
      doc = Rackbench::HtmlReport::Document.new(
        { "format" => "rackbench-report", "format_version" => 2, "configs" => [], "trials" => [], "experiment" => {},
          "settings" => {}, "dimensions" => [], "diffs" => [diff] }
      )
      html = Rackbench::HtmlReport::DiffsSection.new(doc).render
      assert_includes html, "Integer#times (B only) *"
      assert_includes html, %(id="chart-diff-1-profile")
      refute_includes html, "chart-diff-1-calls"
    end

    # An inside summary whose server CPU per request over the plain
    # batches was +values+.
    def inside(*values)
      { "cpu_us_per_request" => Rackbench::Report::InsideSummary::Figure.new(name: "cpu_us_per_request", values: values) }
    end

    it "weighs frames by their share of each profiled trial's samples times the measured CPU per request" do
      # The profiler slowed each trial differently: the same samples over
      # 50 to 200 requests. A's and B's shares hold still; B's loop is 300
      # of 450 samples.
      a = [batch(0, 100, requests: 50), batch(0, 100, requests: 200), batch(0, 100, requests: 100)]
      b = [batch(300, 100, requests: 200), batch(300, 100, requests: 60), batch(300, 100, requests: 120)]
      raw = Rackbench::Report::ProfileDiff.of(a, b, options).to_h
      assert_nil raw["scaled_by"]
      refute raw["rows"].find { |row| row["name"] == "Integer#times" }["changed"],
             "per request in the profiled trials, the profiler's own variation hides it"

      scaled = Rackbench::Report::ProfileDiff.of(a, b, options, a_inside: inside(150.0, 150.0, 150.0),
                                                                b_inside: inside(450.0, 449.0, 451.0)).to_h
      assert_equal "cpu_us_per_request", scaled["scaled_by"]
      loop = scaled["rows"].first
      assert_equal ["Integer#times", "b", true], loop.values_at("name", "only", "changed")
      assert_in_delta 300.0, loop["difference"], 0.01, "300 of 450 samples of 450 µs a request"
      index = scaled["rows"].find { |row| row["name"] == "HelloController#index" }
      assert_in_delta 0.0, index["difference"], 0.01, "100 of 150 samples of 150 µs, then 100 of 450 of 450"
      assert_in_delta 300.0, scaled["difference"], 0.01, "the whole: the measured CPU per request's difference"
      assert_in_delta 300.0, scaled["flame"].find { |node| node["name"] == "Integer#times" }["delta"], 0.01
      # A side without the figure: the profiled trials' own amounts, on both sides.
      assert_nil Rackbench::Report::ProfileDiff.of(a, b, options, a_inside: nil, b_inside: inside(450.0)).to_h["scaled_by"]
    end

    it "makes no diff of profiles taken differently, or of a side without any" do
      wall = batch(0, 100)
      other = Rackbench::Report::ProfileDiff::Batch.new(
        Rackbench::Profile::Merged.new(tool: "stackprof", mode: "wall", interval: 1000, frames: wall.profile.frames,
                                       stacks: wall.profile.stacks), 100
      )
      assert_nil Rackbench::Report::ProfileDiff.of([wall], [other], options)
      assert_nil Rackbench::Report::ProfileDiff.of([], [wall], options)
    end
  end

  describe Rackbench::Report::AllocationDiff do
    Trial = Struct.new(:batch, :inside_figures, :inside, :rps)

    def inside(allocations, gc)
      trials = allocations.each_with_index.map do |count, i|
        Trial.new(i + 1, { "allocations_per_request" => count, "gc_per_1k_requests" => gc[i] }, nil, 100.0)
      end
      Rackbench::Report::InsideSummary.new(trials, options)
    end

    it "gives allocations per request and GC runs per 1,000 requests on both sides, with the difference" do
      a = inside([100, 101, 99, 100, 100], [10, 10, 11, 10, 9])
      b = inside([150, 151, 149, 150, 152], [15, 16, 15, 14, 15])
      rows = Rackbench::Report::AllocationDiff.of(a, b, options).to_a
      assert_equal %w[allocations_per_request gc_per_1k_requests], rows.map { |r| r["name"] }
      alloc = rows.first
      assert_equal [100, 150, 50], alloc.values_at("a", "b", "difference")
      assert_operator alloc["ratio_ci95"].first, :>, 1
      assert_equal "higher", alloc["verdict"]
      assert_equal ["allocations per request", "100", "150", "+50.00", "1.500", alloc["ratio_ci95"].map { |v| format("%.3f", v) }.join("–"), "higher"],
                   Rackbench::Report::DiffText.allocation_cells(alloc)
      assert_nil Rackbench::Report::AllocationDiff.of(a, nil, options)
    end
  end
end
