# frozen_string_literal: true

# The A/A simulation of doc/methodology.md ("Time to a verdict"): does the
# two-stage design of `rackbench run --detect` (a pilot of 5 batches, then
# the batches the pilot's noise needs, the verdict from all of them) call
# identical configurations different more often than a fixed number of
# batches does? And what power does it have for a true 2% and 3% effect?
#
# Batches are drawn from a noise model fitted to real stored batches: each
# stored configuration's requests/s per batch divided by its median, pooled
# (the empirical model: heavy tails and all), and a normal model with the
# same robust CV. The verdict is the report's own (Stats.compare: the
# bootstrap interval of the ratio of medians, ±1% equivalence band), with
# 1,000 resamples instead of 10,000 to keep the run to minutes. Seeded:
# the same arguments print the same figures.
#
#   bundle exec ruby bench/detect_simulation.rb [RESULTS_DIR...]
#   (default: the A/A runs of bench/detect_aa.rb under /tmp/detect-bench)
# Environment: REPS (repetitions of each A/A scenario, default 2000),
# POWER_REPS (of each scenario with a true effect, default 1000),
# MAX_BATCHES (default 50), QUIET_CV (the CV of a quiet machine to simulate
# too, default 0.02)

require "json"
$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "rackbench"

REPS = Integer(ENV.fetch("REPS", "2000"))
POWER_REPS = Integer(ENV.fetch("POWER_REPS", "1000"))
MAX_BATCHES = Integer(ENV.fetch("MAX_BATCHES", "50"))
QUIET_CV = Float(ENV.fetch("QUIET_CV", "0.02"))
PILOT = 5
EFFECT = 0.02
RESAMPLES = 1000

dirs = ARGV.empty? ? Dir.glob("/tmp/detect-bench/aa-seed-*").select { |path| File.directory?(path) } : ARGV
# Each stored configuration's batches over their median.
residuals = dirs.flat_map do |dir|
  Rackbench::Store.open(dir) do |store|
    report = Rackbench::Report.new(store, resamples: 100)
    report.configs.flat_map do |config|
      median = config.rps_median
      config.rps_values.map { |rps| rps / median }
    end
  end
end
abort "no stored batches in #{dirs.join(", ")}" if residuals.size < 10
machine_cv = Rackbench::Stats.robust_cv(residuals)

# Noise models: a Random => one batch's value over the true median.
empirical = ->(rng) { residuals[rng.rand(residuals.size)] }
# Log-normal with median 1 and log-sd cv (about a normal of that CV when
# it is small; always positive, as throughputs are, at this machine's CV).
normal = lambda do |cv|
  lambda do |rng|
    # Box-Muller: one standard normal from two uniforms.
    z = Math.sqrt(-2.0 * Math.log(1.0 - rng.rand)) * Math.cos(2.0 * Math::PI * rng.rand)
    Math.exp(cv * z)
  end
end

# One comparison: baseline at 1, candidate at +ratio+, n batches each.
draw = ->(model, rng, n, ratio) { Array.new(n) { model.call(rng) * ratio } }
verdict = lambda do |base, cand, seed|
  Rackbench::Stats.compare(base, cand, resamples: RESAMPLES, seed: seed, equivalence: 0.01).verdict
end

# The two-stage design, as Detect::Decision computes it: returns [verdict, n].
two_stage = lambda do |model, rng, ratio, seed|
  base = draw.call(model, rng, PILOT, 1.0)
  cand = draw.call(model, rng, PILOT, ratio)
  cv = Rackbench::Stats.planning_cv(base, cand)
  n = Rackbench::Stats.batches_needed(cv: cv, detect: EFFECT).clamp(PILOT, MAX_BATCHES)
  base += draw.call(model, rng, n - PILOT, 1.0)
  cand += draw.call(model, rng, n - PILOT, ratio)
  [verdict.call(base, cand, seed), n]
end

fixed = lambda do |model, rng, ratio, n, seed|
  verdict.call(draw.call(model, rng, n, 1.0), draw.call(model, rng, n, ratio), seed)
end

# Share of verdicts that are +wanted+ ("faster"/"slower" for a false
# verdict under A/A, "slower" for power), with the median n.
scenario = lambda do |name, model, ratio, wanted, seed|
  reps = ratio == 1.0 ? REPS : POWER_REPS
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  rng = Random.new(seed)
  ns = []
  hits = 0
  reps.times do |i|
    v, n = two_stage.call(model, rng, ratio, seed + i)
    ns << n
    hits += 1 if wanted.include?(v)
  end
  ns.sort!
  med_n = ns[ns.size / 2]
  fixed_hits = reps.times.count { |i| wanted.include?(fixed.call(model, rng, ratio, med_n, seed + i)) }
  row = { "scenario" => name, "reps" => reps, "two_stage_rate" => hits.fdiv(reps), "median_n" => med_n,
          "n_p10" => ns[ns.size / 10], "n_p90" => ns[ns.size * 9 / 10], "capped_share" => ns.count(MAX_BATCHES).fdiv(reps),
          "fixed_n_rate" => fixed_hits.fdiv(reps),
          "seconds" => (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).round(1) }
  warn row.to_json
  row
end

# The planning estimators: the mean power (normal approximation: the power
# the n decided has at the true CV) and mean n of a 5-batch pilot planning
# for 2%, with the report's robust CV, the plain CV, and the plain CV's 60%
# upper limit that Detect::Decision uses. Cheap: no bootstrap.
planning = [0.01, 0.02].flat_map do |cv|
  model = normal.call(cv)
  rng = Random.new(11)
  { "robust" => ->(a, b) { Rackbench::Stats.pooled_cv(a, b) },
    "plain" => ->(a, b) { Math.sqrt((Rackbench::Stats.summary(a).cv**2 + Rackbench::Stats.summary(b).cv**2) / 2) },
    "plain, 60% upper limit, every batch" => lambda do |a, b|
      sa = Rackbench::Stats.summary(a)
      sb = Rackbench::Stats.summary(b)
      df = sa.n + sb.n - 2
      Math.sqrt(((sa.n - 1) * sa.cv**2 + (sb.n - 1) * sb.cv**2) / df) *
        Math.sqrt(df / Rackbench::Stats.chi_square_quantile(0.4, df))
    end,
    "plain, 65% upper limit, batches beyond robust z 6 left out (built)" => lambda do |a, b|
      Rackbench::Stats.planning_cv(a, b)
    end }.map do |name, estimate|
    ns = Array.new(10_000) do
      n = Rackbench::Stats.batches_needed(cv: estimate.call(draw.call(model, rng, PILOT, 1.0), draw.call(model, rng, PILOT, 1.0)),
                                          detect: EFFECT)
      n.clamp(PILOT, 500)
    end
    power = ns.sum { |n| Rackbench::Stats.power(cv: cv, batches: n, detect: EFFECT) } / ns.size
    { "cv" => cv, "estimator" => name, "mean_n" => ns.sum.fdiv(ns.size).round(1), "mean_power" => power.round(3),
      "n_for_80_at_true_cv" => Rackbench::Stats.batches_needed(cv: cv, detect: EFFECT) }.tap { |row| warn row.to_json }
  end
end

different = %w[faster slower]
rows = [
  scenario.call("A/A, empirical model (this machine)", empirical, 1.0, different, 1),
  scenario.call("A/A, log-normal at this machine's CV", normal.call(machine_cv), 1.0, different, 2),
  scenario.call("A/A, log-normal at a quiet CV", normal.call(QUIET_CV), 1.0, different, 3),
  scenario.call("2% slower, quiet CV", normal.call(QUIET_CV), 0.98, ["slower"], 4),
  scenario.call("3% slower, quiet CV", normal.call(QUIET_CV), 0.97, ["slower"], 5),
  scenario.call("2% slower, empirical model", empirical, 0.98, ["slower"], 6),
  scenario.call("3% slower, empirical model", empirical, 0.97, ["slower"], 7)
]
puts JSON.pretty_generate("batches" => residuals.size, "machine_robust_cv" => machine_cv, "quiet_cv" => QUIET_CV,
                          "max_batches" => MAX_BATCHES, "pilot" => PILOT, "effect" => EFFECT, "planning" => planning,
                          "rows" => rows)
