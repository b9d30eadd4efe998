# frozen_string_literal: true

# How long `rackbench publish` takes on a year of nightly runs, and how
# big the store is per run, before and after `rackbench prune`
# (doc/performance.md). Run by hand:
#
#   bundle exec ruby -Ilib -Itest bench/publish_speed.rb [NIGHTS] [--real RESULTS_DIR]
#
# 1. stores NIGHTS (default 365) nights of test/support/nightly_history.rb
#    (20 configurations, 10 batches each) into a new results directory;
# 2. publishes them from scratch, then again with nothing new, then after
#    one more night (incremental), timing each with the load average;
# 3. the store's size per run, then after pruning all but the last 30
#    nights (their medians kept);
# 4. with --real DIR (a results directory of real runs), the same sizes
#    for real trials (the engine's whole document: histograms, timelines).
require "benchmark"
require "fileutils"
require "rackbench"
require "tmpdir"
require_relative "../test/support/nightly_history"

nights = Integer(ARGV.find { |a| a.match?(/\A\d+\z/) } || NightlyHistory::NIGHTS)
real = ARGV.index("--real") && ARGV[ARGV.index("--real") + 1]

def load_average = File.read("/proc/loadavg").split.first(3).join(" ")

def line(what, seconds, cpu_s = nil)
  cpu = cpu_s ? format(", CPU %.2f s", cpu_s) : ""
  puts format("%-50s %8.2f s%s   (load average %s)", what, seconds, cpu, load_average)
end

def cpu_s = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

def size(path) = [path, "#{path}-wal"].sum { |p| File.file?(p) ? File.size(p) : 0 }

# Wall and CPU seconds of one publish: on a machine shared with other
# work the wall time is the CPU time stretched by the load, and the CPU
# time is what an idle core would take.
def publish(results, site)
  outcome = nil
  cpu = cpu_s
  seconds = Benchmark.realtime do
    Rackbench::Store.open(results) { |store| outcome = Rackbench::Publish.run(store, out: site) }
  end
  [seconds, outcome, cpu_s - cpu]
end

dir = Dir.mktmpdir("rackbench-publish-speed")
results = File.join(dir, "results")
site = File.join(dir, "site")
begin
  puts "rackbench publish on #{nights} nights of 20 configurations (#{Time.now.utc.strftime("%Y-%m-%d %H:%M")} UTC, " \
       "#{Etc.nprocessors} CPUs)"
  seconds = Benchmark.realtime { Rackbench::Store.open(results) { |s| NightlyHistory.fill(s, nights: 0...nights) } }
  line("store #{nights} nights (#{nights * 200} trials)", seconds)

  seconds, outcome, cpu = publish(results, site)
  line("publish from scratch (#{outcome.written.size} files)", seconds, cpu)
  seconds, outcome, cpu = publish(results, site)
  line("publish again, nothing new (#{outcome.written.size} files)", seconds, cpu)
  Rackbench::Store.open(results) { |s| NightlyHistory.fill(s, nights: nights..nights) }
  seconds, outcome, cpu = publish(results, site)
  line("publish after one more night (#{outcome.written.size} of #{outcome.written.size + outcome.unchanged.size} files)", seconds, cpu)

  db = File.join(results, "results.db")
  runs = nights + 1
  puts format("store: %.1f MB, %.1f KB per run (simulated trials: small documents)", size(db) / 1e6, size(db) / 1e3 / runs)
  cutoff = NightlyHistory::START + (runs - 30) * 86_400
  pruned = Rackbench::Store.open(results) { |s| Rackbench::Publish::Retention.new(s).prune(cutoff) }
  points = Rackbench::Store.open(results) { |s| s.db[:series_points].count }
  puts format("pruned %d runs: %.1f MB -> %.1f MB (%d series points kept, every figure of every run)",
              pruned.experiments.size, pruned.bytes_before / 1e6, pruned.bytes_after / 1e6, points)
  seconds, outcome, cpu = publish(results, site)
  line("publish after the prune (#{outcome.written.size} files)", seconds, cpu)

  if real
    copy = File.join(dir, "real")
    FileUtils.mkdir_p(copy)
    FileUtils.cp(File.join(real, "results.db"), copy)
    Rackbench::Store.open(copy) do |s|
      experiments = s.experiments.size
      trials = s.db[:trials].count
      before = size(File.join(copy, "results.db"))
      Rackbench::Publish::Points.new(s, Rackbench::Publish::Settings.new).refresh
      outcome = Rackbench::Publish::Retention.new(s).prune(Time.now + 86_400)
      puts format("real store %s: %d runs, %d trials, %.1f KB per run (%.1f KB per trial); pruned: %.1f KB per run",
                  real, experiments, trials, before / 1e3 / experiments, before / 1e3 / trials,
                  outcome.bytes_after / 1e3 / experiments)
    end
  end
ensure
  FileUtils.rm_rf(dir)
end
