# frozen_string_literal: true

# The engine's WebSocket echo against Tsung's (Debian's tsung, its
# ts_websocket sessions), on the same echo server (test/fixtures/ws_server.rb
# run standalone), side by side and alternating, so that the shared
# machine's drift lands on both:
#
#   bundle exec ruby bench/ws_peers.rb [ROUNDS] [CLIENTS]
#
# For each tool and round it measures:
# - messages per second (round trips: a message sent, its echo received):
#   the engine's over its window; Tsung's as its messages over its mean
#   session (its users run side by side, each a session of N messages);
# - client CPU per message: the engine's own over its window (cpu.us_per_message,
#   getrusage of the whole process); Tsung's marginal, (CPU of a run of
#   3000 messages per user - CPU of one of 300) / (their messages'
#   difference), each the whole process tree's (RUSAGE_CHILDREN), so that
#   Erlang's start (most of a second) is not counted against it;
# - the mean round trip at low load: one client, closed loop (the engine's
#   echo latency; Tsung's "rt" transaction around each message).
# The server runs on CPU 0, the client on CPU 1. Needs tsung (apt-get
# install tsung) and the engine built (rake compile).
require "json"
require "tmpdir"
require_relative "support/tsung_echo"

ROOT = File.expand_path("..", __dir__)
ENGINE = File.join(ROOT, "lib/rackbench-engine")
ROUNDS = Integer(ARGV.fetch(0, "3"))
CLIENTS = Integer(ARGV.fetch(1, "4"))
BODY = TsungEcho::BODY

abort "tsung not found: apt-get install tsung" unless system("command -v tsung >/dev/null")
abort "engine not built: rake compile" unless File.executable?(ENGINE)

def children_cpu_s
  t = Process.times
  t.cutime + t.cstime
end

# Runs argv pinned to CPU 1; returns [stdout, CPU seconds of its tree, wall seconds].
def measured(argv)
  cpu = children_cpu_s
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  out = IO.popen(["taskset", "-c", "1", *argv], err: File::NULL, &:read)
  raise "#{argv.first} failed: #{$?.inspect}" unless $?.success?

  [out, children_cpu_s - cpu, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started]
end

# The engine: [CPU us per round trip, mean round trip us, messages/s].
def engine_run(port, clients, duration_s)
  out, = measured([ENGINE, "-c", clients.to_s, "-d", "#{duration_s}s", "--workload", "echo",
                   "ws://127.0.0.1:#{port}/echo"])
  doc = JSON.parse(out)
  [doc["cpu"]["us_per_message"], doc["echo"]["latency_us"]["mean"], doc["echo"]["messages_per_s"]]
end

# Tsung: [round trips, CPU s, mean round trip us, messages/s].
def tsung_run(port, clients, messages)
  Dir.mktmpdir("ws-peers-tsung") do |dir|
    file = File.join(dir, "echo.xml")
    File.write(file, TsungEcho.config(port: port, users: clients, messages: messages))
    _out, cpu, = measured(["tsung", "-f", file, "-l", dir, "start"])
    log = Dir[File.join(dir, "*/tsung.log")].first or raise "tsung wrote no log"
    # "stats: tr_rt COUNT MEAN_MS STDDEV MAX MIN ..." per dump: counts add, means weigh by count.
    dumps = File.readlines(log).grep(/^stats: tr_rt /).map { |l| l.split.values_at(2, 3).map(&:to_f) }
    count = dumps.sum(&:first)
    raise "tsung ran no message (see #{log})" if count.zero?

    mean_ms = dumps.sum { |n, m| n * m } / count
    session_ms = File.readlines(log).grep(/^stats: session /).last.split[3].to_f
    [count.to_i, cpu, mean_ms * 1000, count / (session_ms / 1000)]
  end
end

def median(values) = values.sort[values.size / 2]

server = IO.popen(["taskset", "-c", "0", RbConfig.ruby, File.join(ROOT, "test/fixtures/ws_server.rb"), "0"])
%w[TERM INT].each { |sig| trap(sig) { raise Interrupt } } # the ensure below stops the server
port = Integer(server.gets[/\d+/])
load_before = File.read("/proc/loadavg").split.first(3).join(" ")
rows = Hash.new { |h, k| h[k] = [] }
begin
  ROUNDS.times do
    # Alternating: the engine, Tsung (a short and a long run: its marginal
    # CPU), then each at one client (low load: round trips).
    e_load = engine_run(port, CLIENTS, 5)
    t_short = tsung_run(port, CLIENTS, 300)
    t_long = tsung_run(port, CLIENTS, 3000)
    e_low = engine_run(port, 1, 3)
    t_low = tsung_run(port, 1, 2000)
    rows[:engine] << { cpu_us: e_load[0], rate: e_load[2], rtt_us: e_low[1] }
    rows[:tsung] << { cpu_us: (t_long[1] - t_short[1]) * 1e6 / (t_long[0] - t_short[0]), rate: t_long[3],
                      rtt_us: t_low[2] }
    warn format("round: engine %.1f us/msg %.0f msg/s rtt %.0f us | tsung %.1f us/msg %.0f msg/s rtt %.0f us",
                rows[:engine].last[:cpu_us], rows[:engine].last[:rate], rows[:engine].last[:rtt_us],
                rows[:tsung].last[:cpu_us], rows[:tsung].last[:rate], rows[:tsung].last[:rtt_us])
  end
ensure
  Process.kill(:TERM, server.pid)
  Process.wait(server.pid)
end

load_after = File.read("/proc/loadavg").split.first(3).join(" ")
puts "#{Time.now.utc.strftime("%Y-%m-%d %H:%M")} UTC, #{ROUNDS} rounds, #{CLIENTS} clients, load #{load_before} -> #{load_after}"
puts "| tool | messages/s (median) | client CPU us/message (median, marginal) | mean RTT at 1 client, us (median) |"
puts "|---|---|---|---|"
rows.each do |tool, rs|
  puts format("| %s | %.0f | %.1f | %.0f |", tool, median(rs.map { |r| r[:rate] }), median(rs.map { |r| r[:cpu_us] }),
              median(rs.map { |r| r[:rtt_us] }))
end
ratios = rows[:engine].zip(rows[:tsung])
puts format("engine/tsung per round: CPU per message %s; mean RTT at low load %s",
            ratios.map { |e, t| format("%.2f", e[:cpu_us] / t[:cpu_us]) }.join(", "),
            ratios.map { |e, t| format("%.2f", e[:rtt_us] / t[:rtt_us]) }.join(", "))
