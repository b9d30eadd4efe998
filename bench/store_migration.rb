#!/usr/bin/env ruby
# frozen_string_literal: true

# How long opening a results database of schema 2 takes, when it migrates
# to the current schema (3: every figure stored once, the copied columns
# dropped), and how much disk it needs meanwhile: a synthetic database of
# TRIALS trials, each holding a real engine result (test/fixtures/
# engine_result.json, its timeline lengthened to DURATION seconds), is
# migrated through Store.open while a thread records the largest size of
# the database, its WAL and its journal. Run by hand:
#
#   bundle exec ruby bench/store_migration.rb [--trials 2000] [--duration 60]
#
# Figures: doc/performance.md.
require "json"
require "optparse"
require "sequel"
require "tmpdir"
require_relative "../lib/rackbench"

options = { trials: 2000, duration: 60 }
OptionParser.new do |p|
  p.on("--trials N", Integer) { |v| options[:trials] = v }
  p.on("--duration S", Integer, "seconds of per-second timeline in each engine result") { |v| options[:duration] = v }
end.parse!

engine = JSON.parse(File.read(File.expand_path("../test/fixtures/engine_result.json", __dir__)))
second = engine["timeline"].first || { "second" => 0, "requests" => 400, "errors" => 0, "bytes" => 80_000,
                                       "p50_us" => 300.0, "p99_us" => 900.0 }
engine["timeline"] = Array.new(options[:duration]) { |i| second.merge("second" => i) }
document = JSON.generate(engine)

def disk_bytes(path)
  %w[ -wal -journal].sum { |suffix| File.size?("#{path}#{suffix.strip}") || 0 }
end

Dir.mktmpdir("rackbench-migration-bench") do |dir|
  path = File.join(dir, "results.db")
  Sequel.sqlite(path) do |db|
    db.create_table(Rackbench::Store::Schema::VERSION_TABLE) { Integer :version, null: false }
    Rackbench::Store::Schema::MIGRATIONS.first(2).each { |migration| migration.call(db) }
    db[Rackbench::Store::Schema::VERSION_TABLE].insert(version: 2)
    experiment = db[:experiments].insert(name: "bench", fingerprint: "f", created_at: Time.now,
                                         rackbench_version: "0.1.0")
    db.transaction do
      options[:trials].times do |i|
        db[:trials].insert(experiment_id: experiment, key: "t#{i}", status: "ok", app: "rack-hello", server: "puma",
                           ruby: "ruby", rps: engine["rps"], requests: engine["requests"], errors: 0,
                           error_rate: 0.0, latency_us: JSON.generate(engine["latency_us"]), warmup_s: 1.0,
                           measure_s: 2.0, engine_result: document, rss_peak_bytes: 1, pss_peak_bytes: 1,
                           sampler: JSON.generate("rss_peak_bytes" => 1, "pss_peak_bytes" => 1))
      end
    end
  end
  before_bytes = File.size(path)
  peak_bytes = before_bytes
  watching = true
  watcher = Thread.new do
    while watching
      peak_bytes = [peak_bytes, File.size(path) + disk_bytes(path)].max
      sleep 0.01
    end
  end
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  Rackbench::Store.open(dir) { |store| store.trials(nil, result: false).size }
  migrate_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  watching = false
  watcher.join
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  Rackbench::Store.open(dir) { |store| store.trials.size }
  read_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  puts format("%d trials, engine result %.1f KB each: database %.1f MB before", options[:trials],
              document.bytesize / 1e3, before_bytes / 1e6)
  puts format("  open with migration 2 -> 3: %.2f s; peak disk (database + WAL + journal) %.1f MB (%.2fx); " \
              "after %.1f MB", migrate_s, peak_bytes / 1e6, peak_bytes.fdiv(before_bytes), File.size(path) / 1e6)
  puts format("  then reading every trial back, documents included: %.2f s", read_s)
end
