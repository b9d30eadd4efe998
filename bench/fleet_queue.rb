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
#   bundle exec ruby bench/fleet_queue.rb [--workers 50] [--seconds 20] [--heartbeat 5] [--no-fsync]
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
fsync = true
OptionParser.new do |o|
  o.on("--no-fsync", "PostgreSQL without fsync: what the CPUs alone allow") { fsync = false }
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
def simulate(url, start, deadline, heartbeat_s, out)
  latencies = []
  Rackbench::Store.open(url, upgrade: false) do |store|
    queue = Rackbench::Fleet::Queue.new(store)
    workers = Rackbench::Fleet::Workers.new(store)
    id = workers.register(name: "sim-#{Process.pid}", testbed: "sim")
    sleep [start - Time.now, 0].max # every worker connected: all start together
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
  File.write(out, JSON.generate("latencies" => latencies,
                                 "cpu_s" => Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)))
end

# CPU seconds (user + system) used so far by the cluster's processes: the
# postmaster (data/postmaster.pid) and its children.
def postgres_cpu_s(pg)
  postmaster = File.read(File.join(pg.dir, "data", "postmaster.pid")).to_i
  ticks = Etc.sysconf(Etc::SC_CLK_TCK).to_f
  Dir.glob("/proc/[0-9]*/stat").sum do |path|
    fields = File.read(path).split(") ").last.split
    pid = path[%r{/proc/(\d+)/}, 1].to_i
    ppid = fields[1].to_i
    next 0 unless pid == postmaster || ppid == postmaster

    (fields[11].to_i + fields[12].to_i) / ticks
  rescue SystemCallError
    0
  end
end

Rackbench::Test::PostgresCluster.open(fsync: fsync) do |pg|
  url = pg.create_database("fleet_sim")
  Rackbench::Store.open(url, &:location) # the schema
  fill(url, [workers * 400 * seconds / 20, 20_000].max.to_i)
  dir = Dir.mktmpdir("rackbench-fleet-sim")
  start = Time.now + [3, workers * 0.2].max # forks connect first
  deadline = start + seconds
  pids = Array.new(workers) do |i|
    fork do
      simulate(url, start, deadline, heartbeat_s, File.join(dir, "w#{i}.json"))
      exit! 0
    end
  end
  connections = nil
  sleep [start - Time.now, 0].max
  db_cpu_start = postgres_cpu_s(pg)
  Sequel.connect(url, keep_reference: false) do |db|
    sleep [start + (seconds / 2) - Time.now, 0].max
    connections = db[:pg_stat_activity].where(datname: "fleet_sim").count
  end
  # At the window's end, while every worker's backend still lives (an
  # exited backend's CPU leaves /proc with it).
  sleep [deadline - Time.now, 0].max
  db_cpu_s = postgres_cpu_s(pg) - db_cpu_start
  pids.each { |pid| Process.wait(pid) }
  outcomes = Dir.glob(File.join(dir, "w*.json")).map { |f| JSON.parse(File.read(f)) }
  latencies = outcomes.flat_map { |o| o["latencies"] }.sort
  workers_cpu_s = outcomes.sum { |o| o["cpu_s"] }
  FileUtils.rm_rf(dir)
  stats = Sequel.connect(url, keep_reference: false) do |db|
    trials = db[:trials].count
    size = db.get(Sequel.function(:pg_total_relation_size, "trials"))
    { trials: trials, trials_bytes: size, claims: db[:fleet_batches].where(state: "done").count,
      claimed_twice: db[:fleet_batches].where { claims > 1 }.count }
  end
  figures = {
    "workers" => workers, "seconds" => seconds, "cpus" => Etc.nprocessors,
    "claims_per_s" => (stats[:claims] / seconds).round(1), "stores_per_s" => (stats[:trials] / seconds).round(1),
    "loop_ms_p50" => (Rackbench::Stats.quantile(latencies, 0.5) * 1000).round(2),
    "loop_ms_p99" => (Rackbench::Stats.quantile(latencies, 0.99) * 1000).round(2),
    "trial_bytes_in_db" => (stats[:trials_bytes].to_f / stats[:trials]).round,
    "db_mb_per_10k_trials" => (stats[:trials_bytes].to_f / stats[:trials] * 10_000 / 1e6).round(1),
    "connections" => connections,
    # Each batch claimed once, and one trial stored per claim: no two
    # workers ever got the same batch.
    "claimed_once" => stats[:claimed_twice].zero? && stats[:trials] == stats[:claims],
    "db_cpu_ms_per_claim" => (db_cpu_s * 1000 / stats[:claims]).round(2),
    "worker_cpu_ms_per_claim" => (workers_cpu_s * 1000 / stats[:claims]).round(2)
  }
  if json
    puts JSON.pretty_generate(figures)
  else
    puts "#{workers} simulated workers for #{seconds}s on #{Etc.nprocessors} CPUs (PostgreSQL on the same machine, " \
         "fsync #{fsync ? "on" : "off"}):"
    puts "  claims: #{figures["claims_per_s"]}/s, stores: #{figures["stores_per_s"]}/s " \
         "(one recorded 28 KB trial per claim)"
    puts "  one worker's loop (requeue, claim, store, done): p50 #{figures["loop_ms_p50"]} ms, " \
         "p99 #{figures["loop_ms_p99"]} ms"
    puts "  database: #{figures["trial_bytes_in_db"]} bytes per stored trial (with TOAST and indexes), " \
         "#{figures["db_mb_per_10k_trials"]} MB per 10,000 trials"
    puts "  connections to the database mid-run: #{connections}"
    puts "  every batch claimed once, one trial stored per claim: #{figures["claimed_once"] ? "yes" : "NO"}"
    puts "  CPU per claimed and stored trial: PostgreSQL #{figures["db_cpu_ms_per_claim"]} ms, the simulated " \
         "workers #{figures["worker_cpu_ms_per_claim"]} ms (their Ruby and Sequel, with their start)"
  end
end
