# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/report_store"
require_relative "../support/inside_document"

# The gate over stored records (test/support/report_store.rb): what
# regresses, what passes, what cannot be said and why, the thresholds on
# every figure, the family's confidence, the machines, and the Markdown.
# The CLI and its exit codes are in gate_cli_test.rb; real runs in
# test/integration/ci_workflow_test.rb.
describe Rackbench::Gate do
  let(:root) { Dir.mktmpdir("rackbench-gate") }
  after { FileUtils.rm_rf(root) }

  GATE_MACHINE = { "hostname" => "ci-1", "arch" => "x86_64", "cpu_model" => "Xeon E5", "cpu_count" => 2,
              "memory_total_bytes" => 24 * 1024**3, "kernel" => "6.1.0-18-amd64", "warnings" => [] }.freeze

  def report(name, configs, environment: GATE_MACHINE, labels: nil, fields: nil, **options)
    @stores = (@stores || 0) + 1
    Rackbench::Store.open(File.join(root, "#{@stores}-#{name}")) do |store|
      ReportStore.fill(store, configs, name: name, environment: environment, labels: labels, fields: fields)
      Rackbench::Report.new(store, **options)
    end
  end

  def rules(*texts)
    Rackbench::Gate::Rule.parse_all(texts)
  end

  def dims(ruby, threads: 1) = ReportStore.dims(ruby: ruby, threads: threads)

  def noisy(mean, seed, n: 8, sd: 0.01) = ReportStore.noisy(mean, sd, n, seed)

  def within(configs, *texts, baseline: "ruby=stock", **options)
    Rackbench::Gate.within(report("r", configs, baseline: baseline, **options), rules: rules(*texts))
  end

  describe "within one experiment" do
    it "regresses when a configuration is slower than its baseline beyond the limit, with confidence" do
      gate = within({ dims("stock") => noisy(1000, 1), dims("patched") => noisy(900, 2),
                      dims("stock", threads: 4) => noisy(3000, 3), dims("patched", threads: 4) => noisy(2990, 4) },
                    "rps>2%")
      assert_equal Rackbench::Gate::REGRESSED, gate.status
      assert_equal "1 of 2 configurations regressed beyond the thresholds", gate.summary
      regressed, passed = gate.results
      assert_equal ["patched · 1", Rackbench::Gate::REGRESSED], [regressed.pair.label, regressed.status]
      check = regressed.checks.first
      assert_in_delta 0.9, check.ratio, 0.01
      assert_in_delta 0.1, check.worsening, 0.01
      assert_operator check.ratio_ci.last, :<, 1.0
      assert_match(/\A10(\.\d)?% worse, beyond the 2% limit \(CI 0\.\d+-0\.\d+ below 1\)\z/, check.explanation)
      assert_equal Rackbench::Gate::OK, passed.status
      assert_equal ["patched · 1: requests/s #{check.explanation}"], gate.reasons
    end

    it "passes an A/A comparison, and a worsening within the limit" do
      gate = within({ dims("stock") => noisy(1000, 5, sd: 0.02), dims("patched") => noisy(1000, 6, sd: 0.02) }, "rps>2%")
      assert_equal [Rackbench::Gate::OK, []], [gate.status, gate.reasons]
      assert_equal "no configuration of 1 regressed beyond the thresholds", gate.summary
      small = within({ dims("stock") => noisy(1000, 7, sd: 0.002), dims("patched") => noisy(985, 8, sd: 0.002) },
                     "rps>2%")
      check = small.results.first.checks.first
      assert_equal [Rackbench::Gate::OK, "worse"], [small.status, check.verdict]
      assert_match(/\A1\.\d% worse, within the 2% limit/, check.explanation)
    end

    it "says when an interval does not rule out a regression beyond the limit; strict, it cannot say" do
      configs = { dims("stock") => noisy(1000, 30, sd: 0.05), dims("patched") => noisy(1000, 31, sd: 0.05) }
      gate = within(configs, "rps>2%")
      check = gate.results.first.checks.first
      assert_equal [Rackbench::Gate::OK, Rackbench::Stats::NO_DIFFERENCE], [gate.status, check.verdict]
      assert_match(/; the interval reaches \d+(\.\d)?% worse, so a regression beyond the limit is not ruled out \(about \d+ batches per side would\)\z/,
                   check.explanation)
      assert_equal false, check.ruled_out
      markdown = Rackbench::Gate::Markdown.new(JSON.parse(JSON.generate(gate.to_h))).render
      assert_match(/^\| patched \| [−+]\d+\.\d% \(\d\.\d{3}–\d\.\d{3}\) ⚠ \|$/, markdown)
      assert_includes markdown, "⚠ the interval reaches beyond the threshold: a regression beyond it is not ruled out"
      strict = Rackbench::Gate.within(report("strict", configs, baseline: "ruby=stock"), rules: rules("rps>2%"), strict: true)
      assert_equal Rackbench::Gate::CANNOT_SAY, strict.status
      assert_equal true, strict.to_h["settings"]["strict"]
      tight = within({ dims("stock") => noisy(1000, 32, sd: 0.002), dims("patched") => noisy(1000, 33, sd: 0.002) }, "rps>2%")
      refute_match(/not ruled out/, tight.results.first.checks.first.explanation)
    end

    it "cannot say with too few batches, and says why" do
      gate = within({ dims("stock") => noisy(1000, 9), dims("patched") => [500, 510] }, "rps>2%")
      assert_equal Rackbench::Gate::CANNOT_SAY, gate.status
      assert_equal ["patched: requests/s: candidate has 2 batches; a CI needs at least 5 per side"], gate.reasons
      assert_equal "1 of 1 configuration cannot be judged", gate.summary
    end

    it "cannot say when trials failed, naming the failure" do
      gate = within({ dims("stock") => noisy(1000, 10), dims("patched") => noisy(1000, 11) + [nil] }, "rps>2%")
      assert_equal Rackbench::Gate::CANNOT_SAY, gate.status
      assert_equal ["patched: 1 failed trial on the candidate side: server not ready after 60s"], gate.reasons
    end

    it "cannot judge a configuration without a baseline, and a regression elsewhere still regresses" do
      configs = { dims("stock") => noisy(1000, 12), dims("patched") => noisy(800, 13),
                  dims("patched", threads: 4) => noisy(1000, 14) }
      gate = within(configs, "rps>5%")
      assert_equal Rackbench::Gate::REGRESSED, gate.status, "a finding, even with a pair that cannot be judged"
      assert_equal [Rackbench::Gate::REGRESSED, Rackbench::Gate::CANNOT_SAY], gate.results.map(&:status)
      assert_equal ["no baseline configuration to compare with"], gate.results.last.problems
    end
  end

  describe "figures" do
    # Batch i of +dims+: CPU per request cpu_us (sampler CPU over the
    # agent's 10,000 requests), allocations, p99 and memory.
    def measured(cpu_us:, allocations:, p99_us:, pss_mb:)
      lambda do |dims, batch, engine|
        engine["latency_us"] = engine["latency_us"].merge("p99" => p99_us[dims["ruby"]] * (1 + batch * 0.001))
        process = InsideDocument.process(pid: 10, role: "single", allocated: allocations[dims["ruby"]] * 10_000)
        { sample: { "cpu_user_s" => cpu_us[dims["ruby"]] * (1 + batch * 0.001) / 100.0, "cpu_system_s" => 0.0,
                    "pss_peak_bytes" => pss_mb[dims["ruby"]] * 1e6 * (1 + batch * 0.001), "rss_peak_bytes" => 1 },
          inside: InsideDocument.document([process]) }
      end
    end

    it "judges each threshold on its own figure, worse being higher for latency, CPU, allocations and memory" do
      fields = measured(cpu_us: { "stock" => 100, "patched" => 110 }, allocations: { "stock" => 40, "patched" => 40 },
                        p99_us: { "stock" => 800, "patched" => 600 }, pss_mb: { "stock" => 50, "patched" => 60 })
      configs = { dims("stock") => noisy(1000, 15), dims("patched") => noisy(1000, 16) }
      gate = within(configs, "rps>2%", "p99>5%", "cpu>5%", "allocations>1%", "memory>10%", fields: fields)
      checks = gate.results.first.checks.to_h { |c| [c.figure.name, [c.verdict, c.status]] }
      assert_equal({ "rps" => [Rackbench::Stats::NO_DIFFERENCE, "ok"], "p99" => %w[better ok],
                     "cpu" => %w[worse regressed], "allocations" => [Rackbench::Stats::NO_DIFFERENCE, "ok"],
                     "memory" => %w[worse regressed] }, checks)
      assert_equal 5, gate.to_h["settings"]["checks"]
      assert_in_delta 0.99, gate.confidence, 1e-12, "95% over 5 checks (Bonferroni)"
    end

    it "cannot say for a figure a side did not measure" do
      gate = within({ dims("stock") => noisy(1000, 17), dims("patched") => noisy(1000, 18) }, "cpu>5%")
      check = gate.results.first.checks.first
      assert_equal [Rackbench::Gate::CANNOT_SAY, "not measured"], [check.status, check.verdict]
      assert_equal "no server CPU per request measured on the baseline and the candidate side", check.explanation
    end

    it "parses thresholds, refusing what is not one" do
      assert_equal %w[rps>2% p99.9>10% cpu>0.5%], rules("slower>2%,p99.9>10%", "cpu>0.005").map(&:to_s)
      assert_equal ["rps>3%"], rules("rps>2%", "rps>3%").map(&:to_s), "the last limit of a figure counts"
      [["rps<2%", /FIGURE>PCT/], ["speed>2%", /unknown figure 'speed' \(figures: rps, p50, p90, p99, p99\.9, cpu/],
       ["rps>100%", /below 100%/]].each do |text, message|
        assert_match message, assert_raises(Rackbench::UsageError) { rules(text) }.message
      end
    end
  end

  describe "the family's confidence" do
    it "keeps 50 identical configurations from failing the gate, where one interval each would" do
      configs = (1..50).each_with_object({}) do |i, h|
        h[dims("stock", threads: i)] = noisy(1000, 100 + i, n: 6, sd: 0.03)
        h[dims("patched", threads: i)] = noisy(1000, 200 + i, n: 6, sd: 0.03)
      end
      store_report = report("fifty", configs, baseline: "ruby=stock", resamples: 2000)
      gate = Rackbench::Gate.within(store_report, rules: rules("rps>1%"))
      assert_equal 50, gate.to_h["settings"]["checks"]
      assert_in_delta 0.999, gate.confidence, 1e-12
      assert_equal Rackbench::Gate::OK, gate.status
      # Each at 95% on its own, some of the 50 pairs look worse by chance.
      single = store_report.configs.reject(&:baseline?).count do |c|
        Rackbench::Stats.compare(c.baseline_config.rps_values, c.rps_values, resamples: 2000).verdict == "slower"
      end
      assert_operator single, :>=, 1, "the seeds are chosen so that one interval each finds a false regression"

      markdown = Rackbench::Gate::Markdown.new(JSON.parse(JSON.generate(gate.to_h))).render
      visible = markdown.split("<details>").first
      assert_operator visible.lines.size, :<=, 4, "what is seen unfolded of 50 passing configurations"
      assert_operator markdown.bytesize, :<, 10_000
      assert_equal 50, markdown.scan(/^\| patched · \d+ \| /).size, "one folded row each"
    end
  end

  describe "between two experiments" do
    let(:revision) { { "of" => "app", "name" => "own", "commit" => "a" * 40, "subject" => "First", "dirty" => false } }
    let(:base_labels) { Rackbench::Labels.new(given: { "branch" => "main" }, revisions: [revision]) }
    let(:cand_labels) do
      Rackbench::Labels.new(given: { "pr" => "42" },
                            revisions: [revision.merge("commit" => "b" * 40, "subject" => "Burn <300> us | per request")])
    end

    def between(cand_env: GATE_MACHINE, base: noisy(1000, 20), cand: noisy(700, 21), base_testbed: nil, cand_testbed: nil,
                texts: ["rps>2%"])
      base_l = base_testbed ? Rackbench::Labels.new(given: { "testbed" => base_testbed }, revisions: []) : base_labels
      cand_l = cand_testbed ? Rackbench::Labels.new(given: { "testbed" => cand_testbed }, revisions: []) : cand_labels
      a = report("main", { dims("ruby") => base }, labels: base_l)
      b = report("pr", { dims("ruby") => cand }, environment: cand_env, labels: cand_l)
      compare = Rackbench::Report::Compare.experiments(a, b, different_machines: true) # the gate judges machines
      Rackbench::Gate.between(compare, a, b, rules: rules(*texts))
    end

    it "names the revisions, the configuration and the ratio in its Markdown" do
      gate = between
      assert_equal Rackbench::Gate::REGRESSED, gate.status
      doc = JSON.parse(JSON.generate(gate.to_h))
      markdown = Rackbench::Gate::Markdown.new(doc).render
      assert markdown.start_with?("## rackbench gate: ❌ regressed\n\n**1 of 1 configuration regressed beyond the " \
                                  "thresholds** (thresholds: requests/s 2% worse).\n")
      ratio = format("%.3f", gate.results.first.checks.first.ratio)
      assert_match(/^\| ❌ \| ruby=ruby server=puma app=rack-hello processes=1 threads=1 \| requests\/s \| 10\d\d \| 7\d\d \| −\d\d\.\d% \| #{ratio} \(0\.\d+–0\.\d+\) \| \d+(\.\d)?% worse, beyond the 2% limit/,
                   markdown)
      assert_includes markdown, "**Baseline:** experiment main (id 1) · branch=main; app own aaaaaaaaaa"
      assert_includes markdown, "**Candidate:** experiment pr (id 1) · pr=42; app own bbbbbbbbbb"
      assert_includes markdown, "**Machine:** ci-1 (Xeon E5, 2 CPUs, x86\\_64, 24 GiB, Linux 6.1.0-18-amd64)"
      assert_equal "pr=42; app own bbbbbbbbbb", doc["candidate"]["labels_text"]
      assert_equal "Burn \\<300\\> us \\| per request", Rackbench::Gate::Markdown.escape("Burn <300> us | per request")
    end

    it "cannot say when the sides ran on different machines, unless one testbed of one hardware" do
      other = GATE_MACHINE.merge("hostname" => "ci-2")
      gate = between(cand_env: other)
      assert_equal Rackbench::Gate::CANNOT_SAY, gate.status, "a regression on another machine proves nothing"
      assert_equal ["the candidate ran on another machine than the baseline (hostname: \"ci-1\" vs \"ci-2\")"],
                   gate.reasons
      assert_equal "the results cannot be compared", gate.summary
      assert_equal Rackbench::Gate::REGRESSED, between(cand_env: other, base_testbed: "rack-a", cand_testbed: "rack-a").status
      slower_cpu = between(cand_env: other.merge("cpu_model" => "Atom"), base_testbed: "rack-a", cand_testbed: "rack-a")
      assert_equal ["the candidate ran on another machine than the baseline (cpu_model: \"Xeon E5\" vs \"Atom\")"],
                   slower_cpu.reasons, "a testbed is one hardware"
      kernel = between(cand_env: GATE_MACHINE.merge("kernel" => "6.1.0-20-amd64"))
      assert_equal Rackbench::Gate::REGRESSED, kernel.status
      assert_equal ["the machine changed between the runs: kernel: \"6.1.0-18-amd64\" vs \"6.1.0-20-amd64\""], kernel.notes
    end

    it "cannot judge a configuration of the baseline that the candidate lacks, and says what is new" do
      a = report("main2", { dims("ruby") => noisy(1000, 22), dims("ruby", threads: 4) => noisy(1000, 23) })
      b = report("pr2", { dims("ruby") => noisy(1000, 24), dims("ruby", threads: 8) => noisy(1000, 25) })
      gate = Rackbench::Gate.between(Rackbench::Report::Compare.experiments(a, b), a, b, rules: rules("rps>2%"))
      assert_equal Rackbench::Gate::CANNOT_SAY, gate.status
      assert_includes gate.reasons, "ruby=ruby server=puma app=rack-hello processes=1 threads=4: not in the candidate: " \
                                    "none of its trials ran"
      assert_equal ["ruby=ruby server=puma app=rack-hello processes=1 threads=8: only in the candidate, not judged"],
                   gate.notes
    end
  end
end
