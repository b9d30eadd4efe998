# frozen_string_literal: true

require "test_helper"

# Runner::Estimate with fabricated durations: no clock is read. A trial's
# estimate is its plan's measured part plus the boot and stop measured for
# its ruby, server and app, else the run's mean, else the plan's allowance.
describe Rackbench::Runner::Estimate do
  EstimateConfig = Struct.new(:dims, :estimated_s, :load) do
    def calibrated_timeout? = load[:timeout_s].nil?
  end
  EstimateTrial = Struct.new(:config, :batch)

  # A plan trial of ruby/server/app whose plan says 5 s: 1 s warmup + 1 s
  # window + the 3 s allowance for boot and stop; batch 2 with a timeout
  # set unless told (no calibration to pay).
  def trial(server, ruby: "ruby", app: "redmine", planned_s: 5.0, batch: 2, timeout_s: 2.0)
    EstimateTrial.new(EstimateConfig.new({ "ruby" => ruby, "server" => server, "app" => app }, planned_s,
                                         { timeout_s: timeout_s }), batch)
  end

  def record(server, boot_s:, stop_s: 1.0, check_s: 0.5, ruby: "ruby", app: "redmine", hooks: nil)
    identity = boot_s && { "check_s" => check_s, "hooks" => hooks }.compact
    Rackbench::Trial::Record.new(key: "k-#{server}", kind: "http", status: boot_s ? "ok" : "failed", ruby: ruby,
                                 server: server, app: app, boot_s: boot_s, stop_s: boot_s && stop_s,
                                 identity: identity)
  end

  let(:estimate) { Rackbench::Runner::Estimate.new(plan_overhead_s: 3.0, plan_note: "warmup + duration + ~3s per trial") }

  it "is the plan's guess, and says so, before anything was measured" do
    guess = estimate.trial(trial("puma"))
    assert_equal [5.0, :plan, "guessed: warmup + duration + ~3s per trial"], guess.to_a
    assert guess.guess?
  end

  it "uses the boot, stop and check measured for the same ruby, server and app" do
    estimate.learn(record("puma", boot_s: 20.0, stop_s: 4.0, check_s: 1.0))
    estimate.learn(record("puma", boot_s: 30.0, stop_s: 4.0, check_s: 1.0))
    guess = estimate.trial(trial("puma"))
    assert_equal [2.0 + 30.0, :measured, nil], guess.to_a, "1 s warmup + 1 s window + the mean of 25 and 35"
    refute guess.guess?
  end

  it "counts the app's reset, which runs before every trial, and not its setup, which ran once" do
    hooks = { "setup" => { "duration_s" => 100.0 }, "reset" => { "duration_s" => 6.0 } }
    estimate.learn(record("puma", boot_s: 10.0, stop_s: 1.0, check_s: 1.0, hooks: hooks))
    assert_equal 2.0 + 18.0, estimate.trial(trial("puma")).seconds
  end

  it "falls back on the run's mean for a configuration not measured yet, and says so" do
    estimate.learn(record("puma", boot_s: 10.0, stop_s: 0.0, check_s: 0.0))
    estimate.learn(record("puma", boot_s: 20.0, stop_s: 0.0, check_s: 0.0, ruby: "ruby-yjit"))
    guess = estimate.trial(trial("unicorn"))
    assert_equal [2.0 + 15.0, :run, "guessed from other configurations' boot and stop"], guess.to_a
    assert_equal :measured, estimate.trial(trial("puma", ruby: "ruby-yjit")).basis
  end

  it "sums the trials left, resting on the least sure of their estimates" do
    estimate.learn(record("puma", boot_s: 8.0, stop_s: 1.0, check_s: 1.0))
    assert_equal [24.0, :measured], estimate.remaining([trial("puma"), trial("puma")]).to_a.first(2)
    assert_equal [24.0, :run], estimate.remaining([trial("puma"), trial("webrick")]).to_a.first(2)
    assert_equal [0, :measured, nil], estimate.remaining([]).to_a
  end

  it "learns nothing from a trial that never booted, nor from a script" do
    estimate.learn(record("puma", boot_s: nil))
    script = Rackbench::Trial::Record.new(key: "m", kind: "script", status: "ok", ruby: "ruby", server: "fibers",
                                          app: "micro-fibers")
    estimate.learn(script)
    assert_equal :plan, estimate.trial(trial("puma")).basis
  end

  it "adds a calibration's boot, stop and run to a configuration's first batch when its timeout is calibrated" do
    estimate.learn(record("puma", boot_s: 8.0, stop_s: 1.0, check_s: 1.0))
    plain = estimate.remaining([trial("puma", batch: 1)]).seconds
    calibrated = estimate.remaining([trial("puma", batch: 1, timeout_s: nil)]).seconds
    assert_in_delta 10.0 + 1.5, calibrated - plain, 1e-9, "boot + stop + check, then 0.25 + 0.75 + 0.5 s"
    assert_equal plain, estimate.remaining([trial("puma", batch: 2, timeout_s: nil)]).seconds,
                 "later batches use the first one's calibration"
  end
end
