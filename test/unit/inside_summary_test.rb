# frozen_string_literal: true

require "test_helper"

# Per-configuration statistics of the inside figures, their comparison
# with another configuration (the headline's wording) and the run's
# lower-noise measure.
describe Rackbench::Report::InsideSummary do
  InsideSummaryBatch = Struct.new(:batch, :rps, :inside, :inside_figures, keyword_init: true)

  let(:options) { Rackbench::Report::Options.new(resamples: 1000) }

  # One trial per value of +figures+ (name => [value per batch]); rps per batch.
  def trials(figures, rps: nil, inside: nil)
    n = figures.values.first.size
    Array.new(n) do |i|
      values = figures.transform_values { |list| list[i] }
      InsideSummaryBatch.new(batch: i + 1, rps: rps ? rps[i] : 1000.0, inside: inside,
                inside_figures: values.values.all?(&:nil?) ? nil : values)
    end
  end

  def summary(figures, **options)
    Rackbench::Report::InsideSummary.new(trials(figures, **options), self.options)
  end

  it "summarises each figure over the batches that have it, with the median's interval from min_batches" do
    s = summary({ "cpu_us_per_request" => [200.0, 210.0, 190.0, 205.0, 195.0],
                  "gc_ms_per_1k_requests" => [nil, nil, nil, nil, nil],
                  "allocations_per_request" => [300.0, nil, 310.0, 290.0, 305.0] })
    cpu = s.to_h["figures"]["cpu_us_per_request"]
    assert_in_delta 200.0, cpu["median"], 1e-9
    assert_in_delta 200.0, cpu["mean"], 1e-9
    assert_equal [1, 2, 3, 4, 5], cpu["batch_numbers"]
    low, high = cpu["ci95"]
    assert_operator low, :<, 200.0
    assert_operator high, :>, 200.0
    assert_nil s.to_h["figures"]["gc_ms_per_1k_requests"], "no batch measured GC time"
    allocations = s.to_h["figures"]["allocations_per_request"]
    assert_equal [1, 3, 4, 5], allocations["batch_numbers"]
    assert_in_delta 302.5, allocations["median"], 1e-9
    assert_nil allocations["ci95"], "4 batches: below min_batches, no interval"
    refute_nil allocations["cv"]
    assert_equal 5, s.to_h["batches"]
  end

  it "is empty, and the configuration has no inside entry, when no batch has a figure" do
    s = summary({ "cpu_us_per_request" => [nil, nil] })
    assert s.empty?
  end

  it "names the lower-noise measure from the CVs over the same batches" do
    steady_cpu = summary({ "cpu_us_per_request" => [200.0, 201.0, 199.0, 200.0, 200.0] },
                         rps: [1000.0, 1200.0, 800.0, 1100.0, 900.0])
    noise = steady_cpu.noise
    assert_equal "cpu_us_per_request", noise["lower_noise"]
    assert_operator noise["cpu_us_per_request_cv"], :<, noise["rps_cv"]
    steady_rps = summary({ "cpu_us_per_request" => [200.0, 260.0, 150.0, 220.0, 180.0] },
                         rps: [1000.0, 1001.0, 999.0, 1000.0, 1000.0])
    assert_equal "rps", steady_rps.noise["lower_noise"]
    # The batch without a CPU time is left out of requests/s's CV too.
    partial = summary({ "cpu_us_per_request" => [200.0, nil, 200.0] }, rps: [1000.0, 5.0, 1000.0])
    assert_equal 2, partial.noise["batches"]
    assert_in_delta 0.0, partial.noise["rps_cv"], 1e-12
    assert_nil partial.noise["lower_noise"], "equal CVs: neither"
  end

  it "lists every process's memory with its batch for the chart" do
    inside = { "processes" => [{ "pid" => 3, "role" => "single",
                                 "memory" => { "warmup_end" => { "pss_bytes" => 10 }, "window_end" => { "pss_bytes" => 12 } } }],
               "missing" => [{ "pid" => 9, "reason" => "died" }] }
    s = summary({ "cpu_us_per_request" => [1.0, 2.0] }, inside: inside)
    assert_equal [{ "batch" => 1, "pid" => 3, "role" => "single", "warmup_end_pss_bytes" => 10, "window_end_pss_bytes" => 12 },
                  { "batch" => 2, "pid" => 3, "role" => "single", "warmup_end_pss_bytes" => 10, "window_end_pss_bytes" => 12 }],
                 s.memory
    assert_equal 2, s.missing_processes
  end

  it "formats each figure in its unit" do
    format = ->(name, value) { Rackbench::Report::InsideSummary.format(name, value) }
    assert_equal "812.4us", format.call("cpu_us_per_request", 812.4)
    assert_equal "1.50ms", format.call("cpu_us_per_request", 1500.0)
    assert_equal "345", format.call("allocations_per_request", 345.2)
    assert_equal "2.31", format.call("gc_per_1k_requests", 2.3125)
    assert_equal "1.25 ms", format.call("gc_ms_per_1k_requests", 1.25)
    assert_equal "61.2 MB", format.call("worker_pss_bytes", 61_200_000)
    assert_equal "92.00%", format.call("yjit_ratio", 0.92)
    assert_equal "-", format.call("yjit_ratio", nil)
  end

  describe Rackbench::Report::InsideCompare do
    def compare(a, b)
      Rackbench::Report::InsideCompare.new(summary(a), summary(b), options)
    end

    it "words the detected changes: relative for CPU, MB for memory" do
      c = compare({ "cpu_us_per_request" => [100.0, 101.0, 99.0, 100.0, 100.5],
                    "total_pss_bytes" => [400e6, 401e6, 399e6, 400e6, 400e6] },
                  { "cpu_us_per_request" => [62.0, 62.5, 61.5, 62.0, 61.8],
                    "total_pss_bytes" => [520e6, 521e6, 519e6, 520e6, 520e6] })
      assert_equal "\u221238% CPU per request, +120 MB PSS", c.headline
      cpu = c.rows.find { |r| r.name == "cpu_us_per_request" }
      assert_equal "lower", cpu.verdict
      assert_in_delta 0.62, cpu.ratio, 1e-9
      assert_in_delta(-38.0, cpu.difference, 1e-9)
      assert_equal "higher", c.rows.find { |r| r.name == "total_pss_bytes" }.verdict
      assert_equal %w[figures headline], c.to_h.keys
      assert_equal %w[name a_median b_median difference ratio ratio_ci95 verdict explanation], c.to_h["figures"][0].keys
    end

    it "says when nothing was detected, and leaves undetected figures out of the headline" do
      same = { "cpu_us_per_request" => [100.0, 103.0, 97.0, 101.0, 99.0],
               "allocations_per_request" => [300.0, 300.0, 300.0, 300.0, 300.0] }
      assert_equal "no difference detected inside the server", compare(same, same).headline
      more = same.merge("allocations_per_request" => [360.0, 360.0, 361.0, 359.0, 360.0])
      assert_equal "+20% allocations per request", compare(same, more).headline
    end

    it "gives no ratio for a figure that is 0 in a batch, and too few batches below min_batches" do
      c = compare({ "gc_per_1k_requests" => [0.0, 1.0, 0.0, 1.0, 0.0] }, { "gc_per_1k_requests" => [2.0] * 5 })
      row = c.rows.first
      assert_equal "no ratio", row.verdict
      assert_nil row.ratio
      assert_in_delta 2.0, row.difference, 1e-9
      assert_equal "+2.00 diff", Rackbench::Report::InsideCompare.against(row.name, row.to_h), "the views' cell"
      growth = compare({ "worker_pss_growth_bytes" => [2e6, -1e6, 1e6, 3e6, 1e6] },
                       { "worker_pss_growth_bytes" => [-4e6] * 5 }).rows.first
      assert_equal "-5.0 MB diff", Rackbench::Report::InsideCompare.against(growth.name, growth.to_h)
      assert_equal "-", Rackbench::Report::InsideCompare.against("cpu_us_per_request", nil), "the baseline itself"
      few = compare({ "cpu_us_per_request" => [100.0, 100.0] }, { "cpu_us_per_request" => [50.0, 50.0] })
      assert_equal "too few batches", few.rows.first.verdict
      assert_equal "too few batches to judge the inside figures", few.headline
    end

    it "compares only figures both sides have" do
      c = compare({ "cpu_us_per_request" => [1.0] * 5, "yjit_code_bytes" => [nil] * 5 },
                  { "cpu_us_per_request" => [1.0] * 5, "yjit_code_bytes" => [4e6] * 5 })
      assert_equal ["cpu_us_per_request"], c.rows.map(&:name)
    end
  end

  describe Rackbench::Report::InsideNoise do
    it "names the measure with the lower median CV over the configurations, from the run's own CVs" do
      insides = [{ "noise" => { "rps_cv" => 0.05, "cpu_us_per_request_cv" => 0.01 } },
                 { "noise" => { "rps_cv" => 0.03, "cpu_us_per_request_cv" => 0.02 } }, nil,
                 { "noise" => nil }]
      noise = Rackbench::Report::InsideNoise.of(insides)
      assert_equal 2, noise["configs"]
      assert_in_delta 0.04, noise["rps_cv_median"], 1e-12
      assert_in_delta 0.015, noise["cpu_us_per_request_cv_median"], 1e-12
      assert_equal "cpu_us_per_request", noise["lower_noise"]
      assert_equal "Lower-noise measure in this run: server CPU µs per request (median CV of server CPU µs per " \
                   "request 1.5%, of requests/s 4.0% over 2 configurations).", noise["text"]
      flipped = Rackbench::Report::InsideNoise.of([{ "noise" => { "rps_cv" => 0.01, "cpu_us_per_request_cv" => 0.02 } }])
      assert_equal "rps", flipped["lower_noise"]
      assert_match(/\ALower-noise measure in this run: requests\/s .* over 1 configuration\)\.\z/, flipped["text"])
      assert_nil Rackbench::Report::InsideNoise.of([nil, { "noise" => { "rps_cv" => nil, "cpu_us_per_request_cv" => 0.1 } }])
    end
  end
end
