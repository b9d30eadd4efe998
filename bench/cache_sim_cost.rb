# frozen_string_literal: true

# What callgrind's cache simulation (`instructions: { cache_sim: true }`)
# costs in time: the same instructions trial of an app with the
# simulation and without, alternating, REPS times each (one batch per run,
# each run a results directory of its own), and per trial the wall time
# (boot, warmup, window, stop), the window's time under instrumentation
# (the engine's duration_s: where the simulation works) and the counts, so
# that the simulation is seen to change no instruction count.
#
#   bundle exec ruby bench/cache_sim_cost.rb [APP] [REPS] [DIR]
#
# APP defaults to rack-hello, REPS to 3, DIR to a temporary directory.
# Prints a JSON summary: each run's figures, and the medians of the ratios
# on/off of wall time and window time.
require "json"
require "open3"
require "tmpdir"
require "fileutils"
require "rbconfig"
require_relative "../lib/rackbench"

APP = ARGV[0] || "rack-hello"
REPS = Integer(ARGV[1] || "3")
DIR = ARGV[2] || Dir.mktmpdir("rackbench-cache-sim-cost")
EXE = File.expand_path("../exe/rackbench", __dir__)
FileUtils.mkdir_p(DIR)

def experiment(cache_sim, rep)
  <<~YAML
    name: cache-sim-cost-#{cache_sim ? "on" : "off"}
    seed: #{rep}
    batches: 1
    rubies: [ruby]
    servers: [puma]
    apps: [#{APP}]
    processes: 1
    threads: 1
    measure: instructions
    #{cache_sim ? "instructions: { cache_sim: true }" : ""}
    load: { count: 500, timeout: 10s }
  YAML
end

def run(cache_sim, rep)
  name = "#{cache_sim ? "on" : "off"}-#{rep}"
  file = File.join(DIR, "#{name}.yml")
  File.write(file, experiment(cache_sim, rep))
  results = File.join(DIR, name)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  out, status = Open3.capture2e(RbConfig.ruby, EXE, "run", file, "--results", results)
  elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  raise "#{name} failed:\n#{out}" unless status.success?

  trial = Rackbench::Store.open(results) { |store| store.trials(store.latest_experiment[:id]) }.first
  raise "#{name}: the trial failed: #{trial.reason}" unless trial.ok?

  { "run" => name, "cache_sim" => cache_sim, "run_s" => elapsed.round(1), "trial_wall_s" => trial.wall_s&.round(1),
    "boot_s" => trial.boot_s&.round(1), "window_s" => trial.result["duration_s"]&.round(2),
    "instructions_per_request" => trial.instructions["per_request"].round(1),
    "cycles_per_request" => trial.instructions.dig("cache_sim", "per_request")&.round(1) }
end

def median(values)
  sorted = values.compact.sort
  sorted.empty? ? nil : (sorted[(sorted.size - 1) / 2] + sorted[sorted.size / 2]) / 2.0
end

runs = (1..REPS).flat_map { |rep| [run(false, rep), run(true, rep)] }
ratios = lambda do |key|
  runs.each_slice(2).map { |off, on| on[key] && off[key] ? on[key] / off[key] : nil }
end
load = File.read("/proc/loadavg").split.first(3).join(" ")
puts JSON.pretty_generate(
  "app" => APP, "reps" => REPS, "load_average" => load, "runs" => runs,
  "median_ratio_trial_wall" => median(ratios.call("trial_wall_s"))&.round(3),
  "median_ratio_window" => median(ratios.call("window_s"))&.round(3),
  "instructions_differ_by" => median(ratios.call("instructions_per_request"))&.round(5)
)
