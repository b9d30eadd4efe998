#!/usr/bin/env ruby
# frozen_string_literal: true

# What the counting agent (agent/inside.rb, with the window channel's
# watcher) costs the server: the same configuration, Puma with one process
# and one thread serving rack-hello (the cheapest request, where any
# overhead shows most), measured with `inside: counting` and `inside: off`
# in pairs of trials back to back, each pair's order drawn from the seed.
# The throughput ratio counting/off is reported as the median of the pairs'
# ratios with its 95% bootstrap interval (pairing cancels the machine's
# slow drift), and as the ratio of the two sides' medians with the report's
# own interval (Stats.compare). Target: the agent costs under 1%.
#
#   bundle exec ruby bench/agent_overhead.rb [--pairs 20] [--duration 3] [--seed 1]
require "optparse"
require "stringio"
require "tmpdir"
require_relative "../lib/rackbench"

pairs = 20
duration_s = 3
seed = 1
OptionParser.new do |o|
  o.on("--pairs N", Integer) { |v| pairs = v }
  o.on("--duration S", Float) { |v| duration_s = v }
  o.on("--seed N", Integer) { |v| seed = v }
end.parse!

MODES = %w[counting off].freeze

def experiment(mode, duration_s)
  Rackbench::Experiment.parse(<<~YAML, source: "agent-overhead.yml")
    name: agent-overhead-#{mode}
    batches: 1
    rubies: [ruby]
    servers: [puma]
    apps: [rack-hello]
    processes: 1
    threads: 1
    inside: #{mode}
    load: { connections: 4, duration: #{duration_s}s, warmup: 1s, timeout: 5s }
  YAML
end

# One trial of mode in a results directory of its own; its record.
def trial(mode, dir, duration_s)
  results = Dir.mktmpdir("trial", dir)
  Rackbench::Runner.new(source: experiment(mode, duration_s), results_dir: results, out: StringIO.new,
                        err: StringIO.new).run
  record = Rackbench::Store.open(results, &:trials).first
  abort "#{mode}: trial failed: #{record&.reason}" unless record&.ok?
  # Both sides of the knob, checked on every trial: the agent counted, or
  # nothing was loaded.
  counted = record.inside && !record.inside["processes"].empty?
  abort "#{mode}: the agent #{counted ? "ran" : "did not run"}" unless counted == (mode == "counting")
  record
ensure
  FileUtils.rm_rf(results) if results
end

def median(values)
  sorted = values.sort
  n = sorted.size
  n.odd? ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
end

rng = Random.new(seed)
rates = { "counting" => [], "off" => [] }
ratios = []
Dir.mktmpdir("rackbench-agent-overhead") do |dir|
  trial("off", dir, 1) # installs the bundle; not measured
  pairs.times do |i|
    order = rng.rand(2).zero? ? MODES : MODES.reverse
    rate = order.to_h { |mode| [mode, trial(mode, dir, duration_s).rate] }
    rate.each { |mode, r| rates[mode] << r }
    ratios << rate["counting"] / rate["off"]
    warn format("pair %2d (%s first): counting %.1f req/s, off %.1f req/s, ratio %.4f", i + 1, order.first,
                rate["counting"], rate["off"], ratios.last)
  end
end

low, high = Rackbench::Stats.bootstrap_ci(ratios, statistic: :median, seed: seed)
compared = Rackbench::Stats.compare(rates["off"], rates["counting"], seed: seed)
load_s = File.read("/proc/loadavg").split.first
puts format("%d pairs, %.1f s measured each, seed %d; load average at the end %s", pairs, duration_s, seed, load_s)
puts format("off:      median %.1f req/s (min %.1f, max %.1f)", median(rates["off"]), rates["off"].min, rates["off"].max)
puts format("counting: median %.1f req/s (min %.1f, max %.1f)", median(rates["counting"]), rates["counting"].min,
            rates["counting"].max)
puts format("paired ratio counting/off: median %.4f, 95%% CI [%.4f, %.4f] => cost %.2f%% [%.2f%%, %.2f%%]",
            median(ratios), low, high, (1 - median(ratios)) * 100, (1 - high) * 100, (1 - low) * 100)
puts format("ratio of medians (Stats.compare): %.4f, 95%% CI [%.4f, %.4f], %s", compared.ratio, *compared.ratio_ci,
            compared.verdict)
