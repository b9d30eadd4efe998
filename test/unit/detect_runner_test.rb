# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# `run --detect` over the fakes: the pilot runs, the decision is made from
# the pilot's stored trials, exactly the batches decided run, and a resumed
# run decides the same and continues.
describe "Rackbench::Runner with --detect" do
  # A load engine whose throughput is the next of a list, one value per
  # batch: every configuration of a batch measures the same value, so each
  # configuration's batches (and their CV) are the list's, whatever the
  # shuffle within a batch.
  class DetectBatchRateEngine < Fakes::Engine
    def initialize(rates_by_batch, configs:, interrupt_at: nil)
      super(interrupt_at: interrupt_at)
      @rates_by_batch = rates_by_batch
      @configs = configs
    end

    def run(settings, env: {}, on_phase: nil)
      result = super
      rps = @rates_by_batch.fetch((calls - 1) / @configs + @offset.to_i)
      data = result.to_h.merge("rps" => rps, "requests" => (rps * 2).round)
      Rackbench::LoadResult.new(data)
    end

    # For a second engine picking up where an interrupted run stopped.
    attr_writer :offset
  end

  let(:dir) { Dir.mktmpdir("rackbench-detect") }
  let(:out) { StringIO.new }
  let(:install) { Fakes.install }
  # Pilot (5 batches): mean 1000, stddev 15.49, so the CV is 1.549%; two
  # configurations alike pool to the same, planned at its 65% upper limit:
  # 1.549% * sqrt(8 / chi2(0.35, 8)) = 1.791%, which needs 20 batches.
  let(:pilot_rates) { [990.2, 1000.0, 1009.8, 980.4, 1019.6] }
  let(:later_rates) { [1000.0] * 45 }

  after { FileUtils.rm_rf(dir) }

  def experiment(batches)
    Rackbench::Experiment.parse(<<~YAML, source: "detect.yml", base_dir: dir)
      name: detect-test
      seed: 7
      batches: #{batches}
      rubies: [ruby]
      servers: [{ name: puma, label: puma-a }, { name: puma, label: puma-b }]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
  end

  def settings(**given)
    Rackbench::Detect::Settings.new(effect: 0.02, **given)
  end

  def runner(detect, engine, resume: false, output: out, batches: 50)
    collaborators = { engine: engine, launcher: Fakes::Launcher.new, bundles: Fakes::Bundles.new,
                      companions: Fakes.companions }
    Rackbench::Runner.new(source: experiment(detect ? detect.max_batches : batches), results_dir: dir, resume: resume,
                          out: output, err: StringIO.new, installs: [install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          collaborators: collaborators, watchdog: Fakes::Watchdog.new, detect: detect)
  end

  def engine(interrupt_at: nil)
    DetectBatchRateEngine.new(pilot_rates + later_rates, configs: 2, interrupt_at: interrupt_at)
  end

  def stored_batches
    Rackbench::Store.open(dir, &:trials).map(&:batch)
  end

  # batches_needed for 2% at the pilot's planning CV, 95% and 80%:
  # pi * cv^2 * (1.96 + 0.8416)^2 / 0.02^2.
  def needed_for_pilot
    cv = Math.sqrt(250.0) / 1000.0 * Math.sqrt(8 / 6.4348) # Wilson-Hilferty's chi2(0.4, 8)
    (Math::PI * cv**2 * (1.959964 + 0.841621)**2 / 0.02**2).ceil
  end

  it "runs the pilot, then exactly the batches the pilot's noise needs, and stops" do
    assert_equal 20, needed_for_pilot, "the fixture's pilot needs 20 batches"
    summary = runner(settings, engine).run
    assert_equal (1..20).flat_map { |b| [b, b] }, stored_batches.sort
    assert_equal 40, summary.ok
    assert_equal 60, summary.not_run, "the plan's 50 batches less the 20 run, 2 trials each"
    text = out.string
    assert_includes text, "--detect 2%: a pilot of 5 batches"
    assert_match(/pilot of 5 batches done; CV of requests\/s per batch: puma-a 1\.55%, puma-b 1\.55%/, text)
    assert_includes text, "puma-b against puma-a: needs 20 batches (planned at a CV of 1.79%: the pooled CV's 65% upper limit, batches far out of line left out)"
    assert_includes text, "to detect 2%: 20 batches needed: running 20 batches in all"
    assert_includes text, "stopping after batch 20: the plan's 60 later trials are not run"
    assert_equal 1, text.scan("batches needed").size, "decided once"
  end

  it "runs the whole plan without --detect (the other side of the knob)" do
    summary = runner(nil, DetectBatchRateEngine.new(pilot_rates + later_rates, configs: 2), batches: 20).run
    assert_equal 40, summary.ok, "all 20 batches of the plan"
    refute_includes out.string, "needed"
    env = Rackbench::Store.open(dir) { |store| store.runs.last[:environment] }
    refute env.key?("detect"), "no settings stored without --detect"
    Rackbench::Store.open(dir) do |store|
      report = Rackbench::Report.new(store, resamples: 200)
      assert_nil report.detect
      document = report.to_h
      assert document.key?("detect")
      assert_nil document["detect"]
      refute_includes report.terminal_table, "Time to a verdict"
      report.write_html(File.join(dir, "plain.html"))
      refute_includes File.read(File.join(dir, "plain.html")), "time to a verdict"
    end
  end

  it "reports the power the run achieved, in the terminal and the document" do
    runner(settings, engine).run
    Rackbench::Store.open(dir) do |store|
      report = Rackbench::Report.new(store, resamples: 200)
      document = report.to_h["detect"]
      assert_equal settings.to_h, document["settings"]
      assert_equal 20, document["needed"]
      comparison = document["comparisons"].first
      assert_equal ["puma-b", "puma-a", 20, false], comparison.values_at("config", "baseline", "batches", "budget_too_small")
      # All 20 batches, pilot included: the pilot's 5 and 15 at 1000 (a
      # MAD of 0: the robust CV falls back to the plain one, 0.71%).
      values = pilot_rates + [1000.0] * 15
      cv = Rackbench::Stats.pooled_cv(values, values)
      assert_in_delta 0.0071, cv, 0.0001
      assert_in_delta Rackbench::Stats.power(cv: cv, batches: 20, detect: 0.02), comparison["power"], 1e-12
      text = report.terminal_table
      assert_includes text, "Time to a verdict (--detect 2%, pilot 5 batches, measure: requests/s per batch"
      assert_includes text, "puma-b against puma-a: power 100% to detect 2% (20 batches, pooled CV 0.71%)"
      report.write_html(File.join(dir, "detect.html"))
      html = File.read(File.join(dir, "detect.html"))
      assert_includes html, "<dt>time to a verdict</dt><dd>puma-b against puma-a: power 100% to detect 2% " \
                            "(20 batches, pooled CV 0.71%)</dd>"
    end
  end

  it "reports a budget too small when the cap stopped the run short of what was needed" do
    runner(settings(max_batches: 9), engine).run
    Rackbench::Store.open(dir) do |store|
      text = Rackbench::Report.new(store, resamples: 200).terminal_table
      assert_match(/puma-b against puma-a: the budget was too small: 20 batches needed, 9 run; power \d+%/, text)
    end
  end

  it "stores the settings with the run, where the report finds them" do
    runner(settings(max_batches: 20), engine).run
    env = Rackbench::Store.open(dir) { |store| store.runs.last[:environment] }
    assert_equal settings(max_batches: 20).to_h, env["detect"]
    Rackbench::Store.open(dir) do |store|
      assert_equal settings(max_batches: 20), Rackbench::Report.new(store).detect_settings
    end
  end

  it "caps the batches by --max-batches and says so" do
    summary = runner(settings(max_batches: 9), engine).run
    assert_equal 9, stored_batches.max
    assert_equal 0, summary.not_run, "a cap at the plan's size leaves nothing unrun"
    assert_includes out.string, "20 batches needed; capped by --max-batches 9: running 9 batches in all"
  end

  it "caps the batches by the time budget, from the pilot's stored wall times" do
    # The fakes take milliseconds; a budget of 0.2 s holds the pilot only
    # (each later batch is estimated at 2 x 0.1 s of window plus its boots).
    runner(settings(time_budget_s: 0.2), engine).run
    assert_equal 5, stored_batches.max
    assert_match(/capped by the time budget: 5 batches fit: running 5 batches in all/, out.string)
  end

  it "does not cap a budget that holds what is needed" do
    runner(settings(time_budget_s: 3600), engine).run
    assert_equal 20, stored_batches.max
    refute_includes out.string, "capped"
  end

  it "runs what is needed when more than the pilot, and only the pilot when that is enough" do
    quiet = DetectBatchRateEngine.new([1000.0] * 50, configs: 2)
    runner(settings, quiet).run
    assert_equal 5, stored_batches.max, "no noise: the pilot is enough"
    assert_includes out.string, "2 batches needed: running 5 batches in all"
  end

  it "decides the same on --resume from the same pilot, and continues to it" do
    interrupted = engine(interrupt_at: 17) # in batch 9, after the pilot
    assert_raises(Rackbench::Interrupted) { runner(settings, interrupted).run }
    assert_equal 8, stored_batches.max
    resumed_out = StringIO.new
    again = engine
    again.offset = 8 # the engine's next values: batch 9 on
    summary = runner(settings, again, resume: true, output: resumed_out).run
    assert_equal (1..20).flat_map { |b| [b, b] }, stored_batches.sort
    assert_includes resumed_out.string, "to detect 2%: 20 batches needed: running 20 batches in all"
    assert_equal 16, summary.already_done
    # A third run has nothing left: it decides the same and stops at once.
    third_out = StringIO.new
    summary = runner(settings, engine, resume: true, output: third_out).run
    assert_equal 0, summary.ok
    assert_includes third_out.string, "running 20 batches in all"
  end

  it "refuses one configuration: there is nothing to compare" do
    single = Rackbench::Experiment.parse(<<~YAML, source: "one.yml", base_dir: dir)
      name: one
      batches: 50
      rubies: [ruby]
      servers: [puma]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s }
    YAML
    r = Rackbench::Runner.new(source: single, results_dir: dir, out: out, err: StringIO.new, installs: [install],
                              layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                              environment: {}, collaborators: { engine: engine, launcher: Fakes::Launcher.new,
                                                                bundles: Fakes::Bundles.new },
                              watchdog: Fakes::Watchdog.new, detect: settings)
    error = assert_raises(Rackbench::UsageError) { r.run }
    assert_includes error.message, "--detect compares configurations; this experiment runs 1"
  end
end
