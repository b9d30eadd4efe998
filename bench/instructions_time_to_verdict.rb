# frozen_string_literal: true

# The time to a verdict on a 0.5% change (rails-hello's RAILS_HELLO_LOOP=60,
# doc/apps.md), on this machine as it is, three ways (doc/performance.md,
# "Instructions per request: time to a verdict"):
#
#   1. --detect 1% --detect-measure instructions (bench/instructions_slowdown.yml)
#   2. --detect 1% --detect-measure cpu          (bench/instructions_slowdown_time.yml)
#   3. --detect 1% --detect-measure rps          (the same file)
#
# each in its own results directory under DIR (default /tmp/instructions-verdict),
# with --max-batches 20 (the time measures need hundreds: their runs stop at
# the cap and say so), and
# prints a JSON summary per run: wall time, batches run, the decision's
# line, the verdict, the ratio and its interval on the measure planned.
#
#   bundle exec ruby bench/instructions_time_to_verdict.rb [DIR]
require "fileutils"
require "json"
require "open3"
require "rbconfig"
require_relative "../lib/rackbench"

ROOT = File.expand_path("..", __dir__)
DIR = ARGV[0] || "/tmp/instructions-verdict"
EXE = File.join(ROOT, "exe", "rackbench")

RUNS = [
  { name: "instructions", file: "bench/instructions_slowdown.yml", measure: "instructions", max: 20 },
  { name: "cpu", file: "bench/instructions_slowdown_time.yml", measure: "cpu", max: 20 },
  { name: "rps", file: "bench/instructions_slowdown_time.yml", measure: "rps", max: 20 }
].freeze

def figure(config, measure)
  case measure
  when "instructions"
    doc = config["instructions"]
    against = doc["against_baseline"] || {}
    { "median" => doc.dig("per_request", "median"), "cv" => doc.dig("per_request", "cv"), "ratio" => against["ratio"],
      "ratio_ci95" => against["ratio_ci95"], "verdict" => against["verdict"] }
  when "cpu"
    figure = config.dig("inside", "figures", "cpu_us_per_request")
    row = Array(config.dig("inside", "against_baseline", "figures")).find { |r| r["name"] == "cpu_us_per_request" } || {}
    { "median" => figure&.fetch("median"), "cv" => figure&.fetch("cv"), "ratio" => row["ratio"],
      "ratio_ci95" => row["ratio_ci95"], "verdict" => row["verdict"] }
  else
    { "median" => config["rps_median"], "cv" => config["rps_cv"], "ratio" => config["ratio"],
      "ratio_ci95" => config["ratio_ci95"], "verdict" => config["verdict"] }
  end
end

summaries = RUNS.map do |run|
  results = File.join(DIR, run[:name])
  FileUtils.rm_rf(results)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  out, err, status = Open3.capture3(RbConfig.ruby, EXE, "run", File.join(ROOT, run[:file]), "--detect", "1%",
                                    "--detect-measure", run[:measure], "--max-batches", run[:max].to_s, "--json",
                                    "--results", results)
  wall_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  warn err.lines.grep(/pilot of|needs|running|capped/).join
  document = status.success? ? JSON.parse(out) : {}
  config = Array(document["configs"]).find { |c| c["dims"]["app"] == "rails-hello-loop60" } || {}
  { "run" => run[:name], "status" => status.exitstatus, "wall_s" => wall_s.round(1),
    "batches" => Array(document["configs"]).map { |c| c["batches"].to_i + c.dig("instructions", "batches").to_i }.max,
    "decision" => err.lines.grep(/running \d+ batches in all/).first&.strip,
    "statement" => document.dig("detect", "comparisons", 0, "statement"), **figure(config, run[:measure]) }
end
puts JSON.pretty_generate(summaries)
