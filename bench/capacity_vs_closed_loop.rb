#!/usr/bin/env ruby
# frozen_string_literal: true

# Capacity on CPU-bound rack-hello under Puma (issue 13): in one run, the
# closed-loop maximum throughput (batches before and after the search, so
# a drift of the machine shows in its spread) and the capacity search's
# answer (p99 <= 20 ms). An open loop that holds a latency target cannot
# be served faster than a closed loop that keeps every thread busy: the
# capacity must fall at or under the closed-loop maximum, within its spread.
# Prints the figures and, with --json FILE, writes them.
#
#   bundle exec ruby bench/capacity_vs_closed_loop.rb [--closed-batches 3] [--capacity-batches 2] [--json out.json]
require "json"
require "optparse"
require "stringio"
require "tmpdir"
require_relative "../lib/rackbench"
require_relative "../lib/rackbench/capacity"

closed_batches = 3
capacity_batches = 2
json_path = nil
OptionParser.new do |o|
  o.on("--closed-batches N", Integer, "closed-loop batches before and again after the search (default 3)") { |v| closed_batches = v }
  o.on("--capacity-batches N", Integer, "capacity searches (default 2)") { |v| capacity_batches = v }
  o.on("--json FILE", "write the figures as JSON") { |v| json_path = v }
end.parse!

SERVER = <<~YAML
  rubies: [ruby]
  servers: [puma]
  apps: [rack-hello]
  processes: 1
  threads: 4
YAML
# The closed loop needs only enough connections to keep Puma's 4 threads
# busy; the open loop needs more than rate x target (Little's law) or the
# engine's own pool makes requests wait: 2 x 5,000 req/s x 20 ms = 200 (a
# step with fewer is invalid: Capacity::Judge).
CLOSED_LOAD = "load: { connections: 16, duration: 3s, warmup: 1s, timeout: 2s }\n"
OPEN_LOAD = "load: { connections: 256, duration: 2s, warmup: 1s, timeout: 2s }\n"

def closed_loop(dir, name, batches, seed)
  experiment = Rackbench::Experiment.parse("name: #{name}\nseed: #{seed}\nbatches: #{batches}\n#{SERVER}#{CLOSED_LOAD}", source: "#{name}.yml")
  Rackbench::Runner.new(source: experiment, results_dir: dir, out: StringIO.new, err: $stderr).run
  records = Rackbench::Store.open(dir) { |store| store.trials(store.experiments.find { |e| e[:name] == name }[:id]) }
  failed = records.reject(&:ok?)
  abort "closed loop: #{failed.size} trials failed: #{failed.map(&:reason).uniq.join("; ")}" unless failed.empty?
  records.map(&:rate)
end

started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
Dir.mktmpdir("rackbench-capacity-bench") do |dir|
  before = closed_loop(File.join(dir, "closed"), "closed-before", closed_batches, 1)
  capacity_file = <<~YAML
    name: capacity-rack-hello
    seed: 2
    batches: #{capacity_batches}
  YAML
  capacity_file += "#{SERVER}#{OPEN_LOAD}capacity: { p99: 20ms, start_rate: 1000, resolution: 5%, confirmations: 1 }\n"
  experiment = Rackbench::Experiment.parse(capacity_file, source: "capacity-rack-hello.yml")
  steps = Rackbench::Runner::Steps.new(results_dir: File.join(dir, "capacity"), out: StringIO.new, err: $stderr)
  driver = Rackbench::Capacity::Driver.new(experiment, steps: steps, on_step: lambda { |job, step|
    warn format("  capacity b%d step %d %-7s %6d req/s: %-7s p99 %s%s", job.batch, step.ask.index, step.phase, step.rate,
                step.status, Rackbench::Units.latency_us(step.verdict.latency_us && step.verdict.latency_us["p99"]),
                step.status == :invalid ? " (#{step.verdict.reason})" : "")
  })
  doc = Rackbench::Capacity::Summary.new(experiment, driver.run).to_h
  after = closed_loop(File.join(dir, "closed"), "closed-after", closed_batches, 3)

  closed = before + after
  answer = doc["configs"].first
  ci = Rackbench::Stats.bootstrap_ci(closed, seed: 1)
  holds = answer["capacity_rps"] && answer["capacity_rps"] <= closed.max
  figures = {
    "closed_loop_rps" => { "before" => before.map { |r| r.round(1) }, "after" => after.map { |r| r.round(1) },
                           "median" => Rackbench::Stats.median(closed).round(1), "min" => closed.min.round(1),
                           "max" => closed.max.round(1), "ci95" => ci&.map { |x| x.round(1) } },
    "capacity" => answer.slice("capacity_rps", "interval_rps", "resolution_rps", "requests_per_day", "latency_us",
                               "steps_run", "invalid_steps")
                        .merge("batches" => answer["searches"].map { |s| s.slice("batch", "status", "capacity_rps", "first_fail_rps") }),
    "capacity_over_closed_median" => answer["capacity_rps"] && (answer["capacity_rps"] / Rackbench::Stats.median(closed)).round(3),
    "holds" => holds,
    "wall_s" => (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).round(1)
  }
  puts JSON.pretty_generate(figures)
  File.write(json_path, JSON.pretty_generate(figures)) if json_path
  puts holds ? "capacity <= closed-loop maximum: holds" : "capacity above the closed-loop maximum: DOES NOT HOLD"
  exit(holds ? 0 : 1)
end
