# frozen_string_literal: true

# The real runs behind doc/methodology.md's "Time to a verdict" and
# doc/performance.md's time-to-verdict figures:
#
# 1. A/A: bench/detect_aa.yml (two labels of one Puma rack-hello
#    configuration) with 10 seeds, each `rackbench run --detect 2%`: how
#    many call the two different ("faster"/"slower")? At most 1 of 10 may.
# 2. The known slowdown: bench/detect_slowdown.yml (rack-hello against it
#    burning 4 µs of CPU per request), `--detect 2%`: the verdict must be
#    "slower" with an interval covering the true ratio, c / (c + 4) where c
#    is the plain app's measured server CPU µs per request (the inside
#    figures' median): the burn adds 4 CPU µs to each request, and one
#    thread's throughput is the inverse of its CPU per request.
#
# Each run's wall time and batches give the time to a verdict.
#
#   bundle exec ruby bench/detect_aa.rb [SEEDS] [MAX_BATCHES_AA] [MAX_BATCHES_SLOWDOWN]
#   (defaults 10, 10, 20; results under /tmp/detect-bench, a summary as JSON on stdout)

require "json"
require "open3"
require "fileutils"

ROOT = File.expand_path("..", __dir__)
EXE = File.join(ROOT, "exe", "rackbench")
OUT_DIR = "/tmp/detect-bench"
seeds = Integer(ARGV.fetch(0, "10"))
max_aa = Integer(ARGV.fetch(1, "10"))
max_slowdown = Integer(ARGV.fetch(2, "20"))
clock = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }

# Runs one experiment with --detect 2%; returns its report document and wall seconds.
run = lambda do |file, seed, max_batches, name|
  results = File.join(OUT_DIR, name)
  FileUtils.rm_rf(results)
  started = clock.call
  out, err, status = Open3.capture3(RbConfig.ruby, EXE, "run", File.join(ROOT, "bench", file), "--seed", seed.to_s,
                                    "--detect", "2%", "--max-batches", max_batches.to_s, "--results", results, "--json")
  abort "#{name} failed:\n#{err}" unless status.success?
  File.write(File.join(OUT_DIR, "#{name}.log"), err)
  [JSON.parse(out), clock.call - started]
end

summarize = lambda do |doc, wall_s|
  base, cand = doc["configs"]
  detect = doc["detect"]["comparisons"].first
  { "wall_s" => wall_s.round(1), "batches" => cand["batches"], "pilot_cv" => doc["detect"]["pilot_cv"],
    "needed" => doc["detect"]["needed"], "ratio" => cand["ratio"], "ratio_ci95" => cand["ratio_ci95"],
    "verdict" => cand["verdict"], "power" => detect["power"], "statement" => detect["statement"],
    "cpu_us_per_request" => [base, cand].map { |c| c.dig("inside", "figures", "cpu_us_per_request", "median") } }
end

FileUtils.mkdir_p(OUT_DIR)
aa = (1..seeds).map do |seed|
  doc, wall_s = run.call("detect_aa.yml", seed, max_aa, "aa-seed-#{seed}")
  summarize.call(doc, wall_s).merge("seed" => seed).tap { |s| warn "A/A seed #{seed}: #{s.to_json}" }
end
doc, wall_s = run.call("detect_slowdown.yml", 1, max_slowdown, "slowdown")
slowdown = summarize.call(doc, wall_s)
plain_cpu_us = slowdown["cpu_us_per_request"].first
true_ratio = plain_cpu_us / (plain_cpu_us + 4.0)
low, high = slowdown["ratio_ci95"]
slowdown.merge!("true_ratio" => true_ratio, "covered" => !low.nil? && low <= true_ratio && true_ratio <= high)
warn "slowdown: #{slowdown.to_json}"

false_verdicts = aa.count { |s| %w[faster slower].include?(s["verdict"]) }
puts JSON.pretty_generate("aa" => aa, "aa_false_verdicts" => false_verdicts, "aa_runs" => aa.size,
                          "slowdown" => slowdown)
