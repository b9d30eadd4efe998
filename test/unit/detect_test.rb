# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# The pieces of --detect that are pure: the power of a comparison, the
# settings, the decision from a pilot, and the outcome a report states.
describe "Rackbench::Detect" do
  # What Decision and Outcome read of a Report::ConfigSummary.
  DetectFakeConfig = Struct.new(:label, :rps_values, :baseline_config) do
    def batches = rps_values.size
  end

  # Configurations whose batches are +values+ each, the first the baseline of all.
  def configs(*values_by_config)
    list = values_by_config.each_with_index.map { |values, i| DetectFakeConfig.new("c#{i}", values) }
    list.each { |config| config.baseline_config = list.first }
  end

  def settings(**given)
    Rackbench::Detect::Settings.new(effect: 0.02, **given)
  end

  # CV 1.549% (robust: 1.4529%): planned against itself, 20 batches for 2%.
  let(:quiet) { [990.2, 1000.0, 1009.8, 980.4, 1019.6] }
  # CV 4.7434% (robust: 4.4478%).
  let(:noisy) { [970.0, 1000.0, 1030.0, 940.0, 1060.0] }

  describe "Rackbench::Stats.power" do
    it "is batches_needed read backwards: the batches needed reach the power, one fewer does not" do
      [0.005, 0.01, 0.03, 0.1].each do |cv|
        n = Rackbench::Stats.batches_needed(cv: cv, detect: 0.02)
        next if n <= 2

        assert_operator Rackbench::Stats.power(cv: cv, batches: n, detect: 0.02), :>=, 0.8, "cv #{cv}"
        assert_operator Rackbench::Stats.power(cv: cv, batches: n - 1, detect: 0.02), :<, 0.8, "cv #{cv}"
      end
    end

    it "grows with batches and the effect, falls with the noise, and is 1 without noise" do
      assert_operator Rackbench::Stats.power(cv: 0.02, batches: 20, detect: 0.02), :>, Rackbench::Stats.power(cv: 0.02, batches: 10, detect: 0.02)
      assert_operator Rackbench::Stats.power(cv: 0.02, batches: 10, detect: 0.03), :>, Rackbench::Stats.power(cv: 0.02, batches: 10, detect: 0.02)
      assert_operator Rackbench::Stats.power(cv: 0.04, batches: 10, detect: 0.02), :<, Rackbench::Stats.power(cv: 0.02, batches: 10, detect: 0.02)
      assert_equal 1.0, Rackbench::Stats.power(cv: 0.0, batches: 3, detect: 0.02)
      # cv 1%, 10 batches, 2%: Phi(0.02 * sqrt(10 / pi) / 0.01 - 1.96) = Phi(1.6083) = 0.946
      assert_in_delta 0.946, Rackbench::Stats.power(cv: 0.01, batches: 10, detect: 0.02), 0.001
    end

    it "rejects what is not a power's input" do
      assert_raises(ArgumentError) { Rackbench::Stats.power(cv: -0.1, batches: 5, detect: 0.02) }
      assert_raises(ArgumentError) { Rackbench::Stats.power(cv: 0.1, batches: 0, detect: 0.02) }
      assert_raises(ArgumentError) { Rackbench::Stats.power(cv: 0.1, batches: 5, detect: 0) }
    end

    it "plans with the pooled plain CV raised to its upper confidence limit (65% by default)" do
      # df 8: chi2(0.4, 8) = 6.4226 exactly; Wilson-Hilferty gives 6.4348.
      assert_in_delta 6.4226, Rackbench::Stats.chi_square_quantile(0.4, 8), 0.02
      assert_in_delta 3.4895, Rackbench::Stats.chi_square_quantile(0.1, 8), 0.02
      pooled = Math.sqrt((Rackbench::Stats.summary(quiet).cv**2 + 0.047434**2) / 2)
      assert_in_delta pooled * Math.sqrt(8 / 6.4348), Rackbench::Stats.planning_cv(quiet, noisy, assurance: 0.6), 1e-5
      assert_in_delta pooled * Math.sqrt(8 / Rackbench::Stats.chi_square_quantile(0.35, 8)),
                      Rackbench::Stats.planning_cv(quiet, noisy), 1e-5
      assert_operator Rackbench::Stats.planning_cv(quiet, noisy, assurance: 0.8), :>, Rackbench::Stats.planning_cv(quiet, noisy)
      assert_nil Rackbench::Stats.planning_cv([1000.0], noisy)
    end

    it "leaves a pilot batch far out of line out of the plan (the verdict's medians hardly move)" do
      wild = quiet.dup.tap { |values| values[3] = 600.0 } # robust z about -29
      assert_equal [3], Rackbench::Stats.outliers(wild, threshold: Rackbench::Stats::PLANNING_OUTLIER_THRESHOLD)
      mild = quiet.dup.tap { |values| values[3] = 950.0 } # robust z about -5.7: kept
      assert_in_delta Rackbench::Stats.summary(mild).cv, Rackbench::Stats.summary(Rackbench::Stats.without_outliers(mild)).cv, 1e-12
      without = quiet.reject.with_index { |_, i| i == 3 }
      assert_in_delta Rackbench::Stats.planning_cv(without, quiet), Rackbench::Stats.planning_cv(wild, quiet), 1e-12
      assert_operator Rackbench::Stats.planning_cv(wild, quiet), :<, 0.03
      assert_operator Rackbench::Stats.summary(wild).cv, :>, 0.15 # what the plain CV would have planned with
    end

    it "pools two sides' robust CVs, and knows none with fewer than 2 batches" do
      assert_in_delta Math.sqrt((Rackbench::Stats.robust_cv(quiet)**2 + 0.044478**2) / 2), Rackbench::Stats.pooled_cv(quiet, noisy), 1e-9
      assert_nil Rackbench::Stats.pooled_cv([1000.0], noisy)
    end
  end

  describe Rackbench::Detect::Settings do
    it "defaults to a pilot of 5, at most 50 batches, 95% confidence and 80% power, no budget" do
      s = settings
      assert_equal [5, 50, nil, 0.95, 0.8], [s.pilot_batches, s.max_batches, s.time_budget_s, s.confidence, s.power]
    end

    it "round-trips through the stored hash" do
      s = settings(pilot_batches: 4, max_batches: 30, time_budget_s: 600.0, baseline: "server=puma-a")
      assert_equal s, Rackbench::Detect::Settings.from_h(JSON.parse(JSON.generate(s.to_h)))
      assert_equal "rps", s.to_h["measure"]
      assert_equal "requests/s per batch, ratio of medians", s.measure_text
      assert_nil Rackbench::Detect::Settings.from_h(nil)
    end

    it "names the option a bad value came from" do
      { { effect: 0 } => "--detect", { effect: 1.5 } => "--detect", { pilot_batches: 1 } => "--pilot-batches",
        { max_batches: 4 } => "--max-batches", { time_budget_s: 0 } => "--time-budget" }.each do |given, option|
        error = assert_raises(Rackbench::UsageError) { Rackbench::Detect::Settings.new(effect: 0.02, **given) }
        assert_includes error.message, option
      end
    end

    it "says in one line what the run will do" do
      assert_equal "--detect 2%: a pilot of 5 batches, then the batches each comparison needs for a 2% difference " \
                   "at 95% confidence and 80% power (measure: requests/s per batch, ratio of medians), " \
                   "at most 50 batches, time budget 30m 00s", settings(time_budget_s: 1800).describe
    end
  end

  describe Rackbench::Detect::Decision do
    it "takes the batches of the comparison that needs the most, from the pilot's pooled CV" do
      decision = Rackbench::Detect::Decision.new(configs(quiet, quiet, noisy), settings(max_batches: 150))
      needs = decision.needs.to_h { |need| [need.label, need.needs] }
      assert_equal({ "c1" => 20, "c2" => Rackbench::Stats.batches_needed(cv: Rackbench::Stats.planning_cv(quiet, noisy), detect: 0.02) }, needs)
      assert_equal needs["c2"], decision.needed
      assert_equal needs["c2"], decision.batches
      assert_nil decision.cap
      assert_equal({ "c0" => 0.015495, "c1" => 0.015495, "c2" => 0.047434 }, decision.pilot_cvs.transform_values { |v| v.round(6) })
    end

    it "runs at least the pilot" do
      decision = Rackbench::Detect::Decision.new(configs([1000.0] * 5, [1000.0] * 5), settings)
      assert_equal 2, decision.needed
      assert_equal 5, decision.batches
    end

    it "runs at least the batches the report gives a verdict on, after a shorter pilot" do
      short = Rackbench::Detect::Decision.new(configs([1000.0] * 3, [1000.0] * 3), settings(pilot_batches: 3))
      assert_equal 2, short.needed
      assert_equal 5, short.batches, "3 batches a side would end the run with no verdict"
      assert_nil short.cap
      capped = Rackbench::Detect::Decision.new(configs([1000.0] * 3, [1000.0] * 3), settings(pilot_batches: 3,
                                                                                             max_batches: 4))
      assert_equal [4, Rackbench::Detect::Decision::MAX_BATCHES], [capped.batches, capped.cap]
    end

    it "caps by --max-batches, and by the batches that fit the budget when fewer, saying which" do
      by_max = Rackbench::Detect::Decision.new(configs(quiet, quiet), settings(max_batches: 10))
      assert_equal [10, Rackbench::Detect::Decision::MAX_BATCHES], [by_max.batches, by_max.cap]
      by_budget = Rackbench::Detect::Decision.new(configs(quiet, quiet), settings(max_batches: 10), budget_batches: 7)
      assert_equal [7, Rackbench::Detect::Decision::TIME_BUDGET], [by_budget.batches, by_budget.cap]
      roomy = Rackbench::Detect::Decision.new(configs(quiet, quiet), settings, budget_batches: 40)
      assert_equal [20, nil], [roomy.batches, roomy.cap]
      assert_includes by_budget.lines.last, "20 batches needed; capped by the time budget: 7 batches fit: running 7 batches in all"
    end

    it "runs the whole plan (capped) when a pilot side has fewer than 2 ok batches" do
      decision = Rackbench::Detect::Decision.new(configs(quiet, [1000.0]), settings(max_batches: 12))
      assert_nil decision.needed
      assert_equal 12, decision.batches
      assert_includes decision.lines.join("\n"), "CV unknown (fewer than 2 ok batches)"
      assert_includes decision.lines.last, "no batches-needed estimate"
    end

    it "follows another baseline: each configuration against its own" do
      list = configs(noisy, quiet, quiet)
      list.each { |config| config.baseline_config = list[1] }
      decision = Rackbench::Detect::Decision.new(list, settings)
      assert_equal %w[c0 c2], decision.needs.map(&:label)
      assert_equal 20, decision.needs.last.needs
    end
  end

  describe Rackbench::Detect::Outcome do
    it "states the power the final batches had at their noise, pilot included" do
      all = quiet * 5 # 25 batches
      outcome = Rackbench::Detect::Outcome.new(configs(all, all), configs(quiet, quiet), settings)
      row = outcome.rows.first
      cv = Rackbench::Stats.pooled_cv(all, all)
      assert_equal 25, row.batches
      assert_in_delta Rackbench::Stats.power(cv: cv, batches: 25, detect: 0.02), row.power, 1e-12
      assert_equal 20, row.needed
      assert_match(/\Apower \d+% to detect 2% \(25 batches, pooled CV [\d.]+%\)\z/, row.statement)
      assert_equal false, outcome.to_h["comparisons"].first["budget_too_small"]
    end

    it "says the budget was too small when fewer batches ran than the pilot said were needed" do
      outcome = Rackbench::Detect::Outcome.new(configs(quiet + quiet, quiet + quiet), configs(quiet, quiet), settings)
      assert_match(/\Athe budget was too small: 20 batches needed, 10 run; power \d+%/, outcome.rows.first.statement)
      document = outcome.to_h
      assert_equal true, document["comparisons"].first["budget_too_small"]
      assert_equal 20, document["needed"]
      assert_equal settings.to_h, document["settings"]
      assert_equal "Time to a verdict (--detect 2%, pilot 5 batches, measure: requests/s per batch, ratio of medians):",
                   outcome.lines.first
    end
  end

  describe "--detect-measure cpu" do
    # A ConfigSummary with requests/s batches and the agent's server CPU
    # µs per request batches.
    CpuFakeConfig = Struct.new(:label, :rps_values, :cpu_values, :baseline_config) do
      def batches = rps_values.size

      def inside
        { "cpu_us_per_request" => Struct.new(:values).new(cpu_values) }
      end
    end

    def cpu_configs(rps_base, rps_other, cpu_base, cpu_other)
      base = CpuFakeConfig.new("c0", rps_base, cpu_base)
      other = CpuFakeConfig.new("c1", rps_other, cpu_other)
      [base, other].each { |config| config.baseline_config = base }
    end

    it "plans and judges on CPU per request: its quiet batches need fewer than the noisy requests/s" do
      configs = cpu_configs(noisy, noisy.reverse, quiet, quiet.map { |v| v * 1.03 })
      by_rps = Rackbench::Detect::Decision.new(configs, settings)
      by_cpu = Rackbench::Detect::Decision.new(configs, settings(measure: "cpu"))
      assert_equal Rackbench::Stats.batches_needed(cv: Rackbench::Stats.planning_cv(quiet, quiet.map { |v| v * 1.03 }),
                                                   detect: 0.02), by_cpu.needed
      assert_operator by_cpu.needed, :<, by_rps.needed
      assert_match(/CV of server CPU µs per request/, by_cpu.lines.first)
      assert_match(/CV of requests\/s/, by_rps.lines.first)
      outcome = Rackbench::Detect::Outcome.new(configs, configs, settings(measure: "cpu"))
      assert_in_delta Rackbench::Stats.pooled_cv(quiet, quiet.map { |v| v * 1.03 }), outcome.rows.first.cv, 1e-12
      assert_match(/measure: server CPU µs per request.*Inside the server/, outcome.lines.first)
      assert_equal "cpu", outcome.to_h["settings"]["measure"]
    end

    it "is stored and read back, and refused when unknown" do
      stored = settings(measure: "cpu").to_h
      assert_equal "cpu", Rackbench::Detect::Settings.from_h(stored).measure
      # Runs stored before the option said what they measured in words.
      old = stored.merge("measure" => "requests/s per batch, ratio of medians")
      assert_equal "rps", Rackbench::Detect::Settings.from_h(old).measure
      error = assert_raises(Rackbench::UsageError) { settings(measure: "latency") }
      assert_match(/--detect-measure takes rps or cpu/, error.message)
    end
  end
end
