#!/usr/bin/env ruby
# frozen_string_literal: true

# What the counting agent (agent/window.rb's watcher and agent/inside.rb)
# costs a server: an A/B of the same configuration, Puma in single mode
# with one thread serving rack-hello (the cheapest request, where any
# overhead shows most), one server booted with the agent counting and one
# with `inside: off`'s environment (no window, no agent; both load the
# identity report, as every trial does).
#
# Both servers are pinned to CPU 0 and the load engine to CPU 1. The
# agent's server has its window started (inside/window.start) before the
# first run, so it is in the state of a trial's measured window: the
# watcher polling every 10 ms. The runs alternate between the two servers
# in pairs, each pair's order drawn from the seed; while one is measured
# the other is stopped (SIGSTOP), so an idle server's threads take nothing
# from the measured one. The throughput ratio agent/off is the median of
# the pairs' ratios with its 95% bootstrap interval (pairing cancels the
# machine's drift), and the ratio of the two sides' medians with the
# report's interval (Stats.compare). On a machine shared with other work,
# throughput moves with what else runs; the server's CPU time per request
# (from /proc/PID/stat over each run) moves far less, and the agent's cost
# is CPU time too: its paired ratio is the sharper figure. The two snapshots at the window's
# edges are timed in this process. Target: the agent costs under 1%.
#
#   bundle exec ruby bench/agent_overhead.rb [--pairs 30] [--duration 2] [--seed 1]
#
# AGENT_OVERHEAD_POLL=1 withholds the edges' pipes from the agent's server,
# so its watcher polls the mark files every 10 ms (the fallback) instead.
require "optparse"
require "net/http"
require "tmpdir"
require "etc"
require_relative "../lib/rackbench"

pairs = 30
duration_s = 2.0
seed = 1
OptionParser.new do |o|
  o.on("--pairs N", Integer) { |v| pairs = v }
  o.on("--duration S", Float) { |v| duration_s = v }
  o.on("--seed N", Integer) { |v| seed = v }
end.parse!

SERVER_CPU = 0
ENGINE_CPU = 1
MODES = %w[counting off].freeze

def median(values)
  sorted = values.sort
  n = sorted.size
  n.odd? ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
end

def wait_ready(port, pid)
  deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
  loop do
    return if Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/")).code == "200"
  rescue SystemCallError, IOError
    abort "server #{pid} exited" if Process.waitpid(pid, Process::WNOHANG)
    abort "server on port #{port} not ready after 60 s" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    sleep 0.1
  end
end

# Boots Puma (single mode, one thread) serving rack-hello through the
# launcher; mode counting adds the window channel and the agent.
def boot(mode, bundle, app, adapter, install, dir)
  trial_dir = File.join(dir, mode)
  FileUtils.mkdir_p(File.join(trial_dir, "inside"))
  port = Rackbench::Ports.free_port
  argv = ["taskset", "-c", SERVER_CPU.to_s] + bundle.exec_prefix([install.path]) +
         adapter.command(app_dir: app.dir, config_ru: File.join(app.dir, "config.ru"), port: port, processes: 1,
                         threads: 1, work_dir: trial_dir, environment: "production")
  env = bundle.env.merge("RACK_ENV" => "production", "RACKBENCH_TRIAL_DIR" => trial_dir)
  env.merge!(Rackbench::Trial::Http::Inside.env(mode))
  # As ServerLaunch does: the edges' pipes when the window channel is on.
  window = Rackbench::Trial::Http::WindowMarks.new(trial_dir)
  window.reset!
  fds = {}
  if env[Rackbench::Trial::Http::WindowMarks::ENV_VAR] == "1" && ENV["AGENT_OVERHEAD_POLL"] != "1"
    env.merge!(window.env)
    fds = window.spawn_fds
  end
  pid = Process.spawn(env, *argv, chdir: app.dir, pgroup: true, out: File.join(dir, "#{mode}.log"), err: %i[child out],
                               **fds)
  window.spawned!
  wait_ready(port, pid)
  { mode: mode, pid: pid, port: port, trial_dir: trial_dir, window: window }
end

# The server process's CPU time (user + system), in clock ticks.
def cpu_ticks(pid)
  fields = File.read("/proc/#{pid}/stat").split(")").last.split
  fields[11].to_i + fields[12].to_i
end

# One run against server, the others stopped: [req/s, server CPU us per
# request]. No warmup (both servers were warmed up at the start), so the
# server's CPU time over the engine's run is the window's, give or take the
# connections' setup, the same for both sides.
def measure(server, others, duration_s)
  others.each { |other| Process.kill(:STOP, -other[:pid]) }
  Process.kill(:CONT, -server[:pid])
  settings = Rackbench::LoadSettings.build(url: "http://127.0.0.1:#{server[:port]}/", connections: 4,
                                           duration_s: duration_s, warmup_s: 0, timeout_s: 5, cpus: [ENGINE_CPU])
  cpu_before = cpu_ticks(server[:pid])
  result = Rackbench::LoadEngine.new.run(settings)
  cpu_s = (cpu_ticks(server[:pid]) - cpu_before).fdiv(Etc.sysconf(Etc::SC_CLK_TCK))
  abort "#{server[:mode]}: errors #{result.errors}" unless result.requests.positive?
  [result.rps, cpu_s * 1e6 / result.requests]
ensure
  others.each { |other| Process.kill(:CONT, -other[:pid]) }
end

# The CPU time of the agent's watcher thread (named "rackbench-window",
# comm truncated to 15 bytes) in server pid, and how long it has run: its
# direct cost, exactly (what it costs the server's own threads through the
# GVL is in the A/B above).
def watcher_cpu(pid)
  task = Dir.glob("/proc/#{pid}/task/*").find { |dir| File.read(File.join(dir, "comm")).start_with?("rackbench-wind") }
  abort "no watcher thread in #{pid}" unless task
  fields = File.read(File.join(task, "stat")).split(")").last.split
  hz = Etc.sysconf(Etc::SC_CLK_TCK)
  uptime_s = File.read("/proc/uptime").split.first.to_f
  { cpu_s: (fields[11].to_i + fields[12].to_i).fdiv(hz), alive_s: uptime_s - fields[19].to_i.fdiv(hz) }
end

# The cost of the agent's two snapshots, in this process: what each
# server process pays at the window's edges.
def snapshot_cost_us
  load File.expand_path("../lib/rackbench/agent/window.rb", __dir__)
  load File.expand_path("../lib/rackbench/agent/inside.rb", __dir__)
  n = 200
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  n.times do
    start = RackbenchInside.start_snapshot
    RackbenchInside.json(RackbenchInside.counts(pid: 1, ppid: 0, role: "single", start: start,
                                                finish: RackbenchInside.end_snapshot))
  end
  (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started) / n * 1e6
end

install = Rackbench::Rubies::Prober.new(env: ENV, timeout_s: 30)
                                    .describe(Rackbench::Rubies::Locator::Candidate.new(path: RbConfig.ruby, source: :path))
spec = Rackbench::Experiment.parse("name: b\nservers: [puma]\napps: [rack-hello]\n").apps.first
app = Rackbench::App.resolve(spec)
adapter = Rackbench::Servers.fetch("puma")
rng = Random.new(seed)
rates = { "counting" => [], "off" => [] }
ratios = []
watcher = nil
cpu_ratios = []
Dir.mktmpdir("rackbench-agent-overhead") do |dir|
  bundle = Rackbench::Trial::Http::BundleCache.new(out: $stderr).fetch(app, install, adapter, log_dir: dir)
  servers = MODES.to_h { |mode| [mode, boot(mode, bundle, app, adapter, install, dir)] }
  begin
    servers["counting"][:window].mark(:start)
    MODES.each { |mode| measure(servers[mode], servers.values - [servers[mode]], 1.0) } # warm both up
    pairs.times do |i|
      order = rng.rand(2).zero? ? MODES : MODES.reverse
      runs = order.to_h { |mode| [mode, measure(servers[mode], servers.values - [servers[mode]], duration_s)] }
      runs.each { |mode, (r, _)| rates[mode] << r }
      ratios << runs["counting"][0] / runs["off"][0]
      cpu_ratios << runs["counting"][1] / runs["off"][1]
      warn format("pair %2d (%-8s first): counting %.1f req/s %.1f us CPU/req, off %.1f req/s %.1f us CPU/req, " \
                  "throughput ratio %.4f, CPU ratio %.4f", i + 1, order.first, *runs["counting"], *runs["off"],
                  ratios.last, cpu_ratios.last)
    end
    watcher = watcher_cpu(servers["counting"][:pid])
    # Both sides of the knob: the agent counted the whole run; off ran none.
    servers["counting"][:window].mark(:end)
    counts = File.join(servers["counting"][:trial_dir], "inside", "#{servers["counting"][:pid]}.counts.json")
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
    sleep 0.05 until File.exist?(counts) || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    abort "the agent wrote no counts" unless File.exist?(counts)
    abort "the off server counted" unless Dir.glob(File.join(servers["off"][:trial_dir], "inside", "*")).empty?
    warn "agent's counts: #{File.read(counts)[0, 300]}..."
  ensure
    servers.each_value do |server|
      Process.kill(:CONT, -server[:pid])
      Process.kill(:TERM, -server[:pid])
      Process.wait(server[:pid])
    rescue SystemCallError
      nil
    end
  end
end

low, high = Rackbench::Stats.bootstrap_ci(ratios, statistic: :median, seed: seed)
cpu_low, cpu_high = Rackbench::Stats.bootstrap_ci(cpu_ratios, statistic: :median, seed: seed)
compared = Rackbench::Stats.compare(rates["off"], rates["counting"], seed: seed)
puts format("%d pairs of %.1f s runs, seed %d; load average at the end: %s", pairs, duration_s, seed,
            File.read("/proc/loadavg").split.first(3).join(" "))
MODES.each do |mode|
  puts format("%-8s median %.1f req/s (min %.1f, max %.1f)", mode, median(rates[mode]), rates[mode].min,
              rates[mode].max)
end
puts format("paired ratio counting/off: median %.4f, 95%% CI [%.4f, %.4f] (agent's cost %+.2f%%, CI [%+.2f%%, %+.2f%%])",
            median(ratios), low, high, (1 - median(ratios)) * 100, (1 - high) * 100, (1 - low) * 100)
puts format("paired server CPU per request counting/off: median %.4f, 95%% CI [%.4f, %.4f] (agent's cost %+.2f%%, " \
            "CI [%+.2f%%, %+.2f%%])", median(cpu_ratios), cpu_low, cpu_high, (median(cpu_ratios) - 1) * 100,
            (cpu_low - 1) * 100, (cpu_high - 1) * 100)
puts format("ratio of medians (Stats.compare): %.4f, 95%% CI [%.4f, %.4f]: %s", compared.ratio, *compared.ratio_ci,
            compared.verdict)
puts format("the watcher thread's own CPU time: %.2f s over its %.0f s (%.3f%% of a CPU)", watcher[:cpu_s],
            watcher[:alive_s], watcher[:cpu_s] / watcher[:alive_s] * 100)
puts format("the two edge snapshots and the counts' JSON, per process: %.0f us", snapshot_cost_us)
