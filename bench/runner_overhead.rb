#!/usr/bin/env ruby
# frozen_string_literal: true

# The runner's own cost per trial: wall time outside warmup and measurement
# (bundle check, port, boot until ready, the app check, engine start and
# exit, stop and reap, the store's commit), for Puma and the rack-hello app
# with the Bundler environment already installed. Target: <= 1.5 s.
#
#   bundle exec ruby bench/runner_overhead.rb [--trials 10]
require "optparse"
require "stringio"
require "tmpdir"
require_relative "../lib/rackbench"

trials = 10
OptionParser.new { |o| o.on("--trials N", Integer) { |v| trials = v } }.parse!

def experiment(batches)
  Rackbench::Experiment.parse(<<~YAML, source: "overhead.yml")
    name: runner-overhead
    batches: #{batches}
    rubies: [ruby]
    servers: [puma]
    apps: [rack-hello]
    processes: 1
    threads: 1
    load: { connections: 4, duration: 1s, warmup: 0.5s }
  YAML
end

def median(values)
  sorted = values.sort
  n = sorted.size
  n.odd? ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
end

Dir.mktmpdir("rackbench-overhead") do |dir|
  # One trial first, so the bundle is installed and nothing below pays for it.
  Rackbench::Runner.new(source: experiment(1), results_dir: File.join(dir, "warm"), out: StringIO.new,
                        err: StringIO.new).run
  results = File.join(dir, "results")
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  Rackbench::Runner.new(source: experiment(trials), results_dir: results, out: StringIO.new,
                        err: StringIO.new).run
  total_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  rows = Rackbench::Store.open(results) { |store| store.trials }
  abort "some trials failed: #{rows.map { |r| r.reason }.compact.uniq}" unless rows.all? { |r| r.status == "ok" }

  overhead = rows.map { |r| r.wall_s - r.warmup_s - r.measure_s }
  puts format("%d trials, %.1f s in all (%.2f s per trial beyond the trials' own wall time)", rows.size, total_s,
              (total_s - rows.sum { |r| r.wall_s }) / rows.size)
  puts format("overhead per trial (wall - warmup - measured): median %.3f s, min %.3f s, max %.3f s",
              median(overhead), overhead.min, overhead.max)
  puts format("  of which boot until ready: median %.3f s; identity check: median %.3f s (the first trial's " \
              "includes asking the variant's ruby what it runs: %.3f s); stop and reap: median %.3f s",
              median(rows.map { |r| r.boot_s }), median(rows.map { |r| r.identity["check_s"] }),
              rows.min_by(&:position).identity["check_s"], median(rows.map { |r| r.stop_s }))
end
