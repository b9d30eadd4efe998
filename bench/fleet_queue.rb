#!/usr/bin/env ruby
# frozen_string_literal: true

# How many claims and stores per second the fleet's queue sustains: N
# simulated workers (processes, each with its own connection, as hosts
# have) against one PostgreSQL server on this machine, each looping as
# Fleet::Worker does around a batch, with no benchmark in between: put
# back late batches (Queue#requeue_dead), claim the oldest queued batch
# (one UPDATE ... FOR UPDATE SKIP LOCKED ... RETURNING), store a recorded
# trial under the claim (ClaimedStore: the claim's row locked, the trial
# inserted, one transaction), mark the batch done. A second thread per
# worker beats its heartbeat every --heartbeat seconds, as a worker's does.
# The recorded trial is a real one (bench/fleet_queue_trial.json: Puma, a
# 10 s window, 28 KB with its engine document), stored under a new key
# each time.
#
# Prints claims/s and stores/s over the window, each worker's loop latency
# (p50, p99), the database's size per 10,000 trials, and the server's
# connections; --json for the figures alone.
#
#   bundle exec ruby bench/fleet_queue.rb [--workers 50] [--seconds 20] [--heartbeat 5]
#
# Starts and stops its own cluster (test/support/postgres_cluster.rb: Debian's
# PostgreSQL, initdb in a temporary directory, fsync ON here, as a real
# store runs; max_connections 200), so it needs root like the tests.
require "optparse"
require "json"
require "etc"
require_relative "../lib/rackbench"
require_relative "../test/support/postgres_cluster"

workers = 50
seconds = 20.0
heartbeat_s = 5.0
json = false
OptionParser.new do |o|
  o.on("--workers N", Integer) { |v| workers = v }
  o.on("--seconds S", Float) { |v| seconds = v }
  o.on("--heartbeat S", Float) { |v| heartbeat_s = v }
  o.on("--json") { json = true }
end.parse!

TRIAL = JSON.parse(File.read(File.join(__dir__, "fleet_queue_trial.json")))
BATCHES_PER_EXPERIMENT = 1000

def record(key, batch)
  fields = TRIAL.transform_keys(&:to_sym)
  %i[started_at finished_at].each { |f| fields[f] = Time.iso8601(fields[f]) if fields[f] }
  Rackbench::Trial::Record.new(**fields, key: key, batch: batch, host: "sim", attempt: 1)
end

# Queues enough batches that no worker runs dry in the window: experiments
# of BATCHES_PER_EXPERIMENT one-trial batches.
def fill(url, batches)
  Rackbench::Store.open(url) do |store|
    queue = Rackbench::Fleet::Queue.new(store)
    (batches.fdiv(BATCHES_PER_EXPERIMENT).ceil).times do |i|
      id = store.find_or_create_experiment(name: "sim-#{i}", fingerprint: "f#{i}", seed: 1, batches: BATCHES_PER_EXPERIMENT,
                                           source_text: "", environment: {})
      queue.enqueue(id, batches: BATCHES_PER_EXPERIMENT, testbed: "sim", document: {})
    end
  end
end

# One simulated worker until +deadline+ (a wall-clock Time, the same for
# all); writes its loop latencies (s) to +out+ as JSON.
def simulate(url, deadline, heartbeat_s, out)
  latencies = []
  Rackbench::Store.open(url, upgrade: false) do |store|
    queue = Rackbench::Fleet::Queue.new(store)
    workers = Rackbench::Fleet::Workers.new(store)
    id = workers.register(name: "sim-#{Process.pid}", testbed: "sim")
    current = nil
    beat = Thread.new do
      loop do
        sleep heartbeat_s
        workers.beat(id)
        claim = current
        queue.beat(claim.id, id) if claim
      end
    end
    while Time.now < deadline
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      queue.requeue_dead(dead_after_s: 60)
      claim = queue.claim(worker_id: id, testbed: "sim")
      break unless claim

      current = claim
      claimed = Rackbench::Fleet::ClaimedStore.new(store, queue: queue, claim: claim, worker_id: id)
      claimed.save_trial(claim.experiment_id, record("c#batch=#{claim.batch}", claim.batch))
      queue.finish(claim.id, id)
      current = nil
      latencies << Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    end
    beat.kill
    workers.stop(id)
  end
  File.write(out, JSON.generate(latencies))
end

Rackbench::Test::PostgresCluster.open(fsync: true) do |pg|
  url = pg.create_database("fleet_sim")
  Rackbench::Store.open(url, &:location) # the schema
  fill(url, [workers * 400 * seconds / 20, 20_000].max.to_i)
  dir = Dir.mktmpdir("rackbench-fleet-sim")
  start = Time.now + 3 # forks connect first
  deadline = start + seconds
  pids = Array.new(workers) do |i|
    fork do
      sleep [start - Time.now, 0].max
      simulate(url, deadline, heartbeat_s, File.join(dir, "w#{i}.json"))
      exit! 0
    end
  end
  connections = nil
  Sequel.connect(url, keep_reference: false) do |db|
    sleep [start + (seconds / 2) - Time.now, 0].max
    connections = db[:pg_stat_activity].where(datname: "fleet_sim").count
  end
  pids.each { |pid| Process.wait(pid) }
  latencies = Dir.glob(File.join(dir, "w*.json")).flat_map { |f| JSON.parse(File.read(f)) }.sort
  FileUtils.rm_rf(dir)
  stats = Sequel.connect(url, keep_reference: false) do |db|
    trials = db[:trials].count
    size = db.get(Sequel.function(:pg_total_relation_size, "trials"))
    { trials: trials, trials_bytes: size, claims: db[:fleet_batches].where(state: "done").count }
  end
  figures = {
    "workers" => workers, "seconds" => seconds, "cpus" => Etc.nprocessors,
    "claims_per_s" => (stats[:claims] / seconds).round(1), "stores_per_s" => (stats[:trials] / seconds).round(1),
    "loop_ms_p50" => (Rackbench::Stats.quantile(latencies, 0.5) * 1000).round(2),
    "loop_ms_p99" => (Rackbench::Stats.quantile(latencies, 0.99) * 1000).round(2),
    "trial_bytes_in_db" => (stats[:trials_bytes].to_f / stats[:trials]).round,
    "db_mb_per_10k_trials" => (stats[:trials_bytes].to_f / stats[:trials] * 10_000 / 1e6).round(1),
    "connections" => connections
  }
  if json
    puts JSON.pretty_generate(figures)
  else
    puts "#{workers} simulated workers for #{seconds}s on #{Etc.nprocessors} CPUs (PostgreSQL on the same machine):"
    puts "  claims: #{figures["claims_per_s"]}/s, stores: #{figures["stores_per_s"]}/s " \
         "(one recorded 28 KB trial per claim)"
    puts "  one worker's loop (requeue, claim, store, done): p50 #{figures["loop_ms_p50"]} ms, " \
         "p99 #{figures["loop_ms_p99"]} ms"
    puts "  database: #{figures["trial_bytes_in_db"]} bytes per stored trial (with TOAST and indexes), " \
         "#{figures["db_mb_per_10k_trials"]} MB per 10,000 trials"
    puts "  connections to the database mid-run: #{connections}"
  end
end
