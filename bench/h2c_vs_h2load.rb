#!/usr/bin/env ruby
# frozen_string_literal: true

# The engine's HTTP/2 (--protocol h2c) side by side with h2load (Debian's
# nghttp2-client, built on the same libnghttp2), both against the same
# nghttpd (Debian's nghttp2-server, --no-tls: h2c with prior knowledge)
# serving a 12-byte file. nghttpd is pinned to CPU 0, the client under test
# to CPU 1; one client thread, the same connections, streams per connection
# and duration for both. Repetitions alternate between the tools so the
# machine's drift lands on both; medians and same-run ratios are reported.
#
#   bundle exec ruby bench/h2c_vs_h2load.rb [--reps 5] [--duration 5] [--connections 4] [--streams 8]
#
# Two parts:
# 1. Counts: one short run of each tool against an nghttpd started with -v,
#    whose log has one ":path" line per request it received; each tool's
#    count of completed requests is compared with the server's (the engine's
#    warmup and window together: it has no other requests).
# 2. Throughput and CPU: nghttpd without -v; requests/s as each tool
#    reports it, and client CPU per request from the kernel's accounting of
#    each child (user + system over its whole life) over the requests it
#    completed.
require "json"
require "optparse"
require "open3"
require "socket"
require "tmpdir"
require "etc"

ROOT = File.expand_path("..", __dir__)
ENGINE = File.join(ROOT, "lib/rackbench-engine")
# Issue 14's target: throughput within 10% of h2load's.
TARGET_RPS_RATIO = 0.90

options = { reps: 5, duration_s: 5, connections: 4, streams: 8, server_cpu: 0, client_cpu: 1 }
OptionParser.new do |o|
  o.on("--reps N", Integer) { |v| options[:reps] = v }
  o.on("--duration S", Integer) { |v| options[:duration_s] = v }
  o.on("--connections N", Integer) { |v| options[:connections] = v }
  o.on("--streams N", Integer) { |v| options[:streams] = v }
end.parse!

abort "build the engine first: bin/setup" unless File.executable?(ENGINE)
%w[nghttpd h2load taskset].each do |tool|
  abort "#{tool} not found: apt-get install nghttp2-server nghttp2-client util-linux" unless system("command -v #{tool} >/dev/null")
end

def free_port
  TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
end

def wait_listening(port)
  100.times do
    TCPSocket.new("127.0.0.1", port).close
    return
  rescue SystemCallError
    sleep 0.05
  end
  abort "nghttpd did not listen on #{port}"
end

def start_nghttpd(root, port, cpu, verbose: false, log: File::NULL)
  argv = ["taskset", "-c", cpu.to_s, "nghttpd", "--no-tls", "-a", "127.0.0.1", "-d", root]
  argv << "-v" if verbose
  pid = Process.spawn(*argv, port.to_s, out: log, err: File::NULL, pgroup: true)
  wait_listening(port)
  pid
end

def stop(pid)
  Process.kill(:TERM, -pid)
  Process.wait(pid)
rescue SystemCallError
  nil
end

# Runs argv as a child; returns [stdout, cpu_s of the child].
def run_child(argv)
  before = Process.times
  out, status = Open3.capture2(*argv)
  after = Process.times
  abort "#{argv.first(4).join(" ")} failed: #{status}" unless status.success?
  [out, (after.cutime - before.cutime) + (after.cstime - before.cstime)]
end

def h2load(url, o, duration_s)
  argv = ["taskset", "-c", o[:client_cpu].to_s, "h2load", "-t", "1", "-c", o[:connections].to_s,
          "-m", o[:streams].to_s, "-D", duration_s.to_s, url]
  out, cpu_s = run_child(argv)
  done = out[/requests: .*?(\d+) succeeded/, 1].to_i
  rps = out[/finished in [\d.]+s, ([\d.]+) req\/s/, 1].to_f
  { requests: done, total: done, rps: rps, cpu_s: cpu_s }
end

def engine(url, o, duration_s)
  argv = ["taskset", "-c", o[:client_cpu].to_s, ENGINE, "--protocol", "h2c", "-t", "1", "-c", o[:connections].to_s,
          "--streams", o[:streams].to_s, "-d", "#{duration_s}s", url]
  out, cpu_s = run_child(argv)
  doc = JSON.parse(out)
  errors = doc["errors"].values.sum
  abort "engine errors: #{doc["errors"]}" if errors.positive?
  { requests: doc["requests"], total: doc["requests"] + doc["warmup"]["requests"], rps: doc["rps"], cpu_s: cpu_s }
end

def median(values)
  s = values.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

Dir.mktmpdir("h2c-bench") do |root|
  File.write(File.join(root, "hello"), "hello world\n")
  o = options
  puts "machine: #{File.read("/proc/cpuinfo")[/model name\s*: (.*)/, 1]}, #{Etc.nprocessors} CPUs, " \
       "load average #{File.read("/proc/loadavg").split.first(3).join(" ")}"
  puts "nghttpd on CPU #{o[:server_cpu]}, client on CPU #{o[:client_cpu]}: #{o[:connections]} connections x " \
       "#{o[:streams]} streams, one client thread"

  # 1. Counts against nghttpd's own log.
  log = File.join(root, "nghttpd.log")
  port = free_port
  pid = start_nghttpd(root, port, o[:server_cpu], verbose: true, log: log)
  url = "http://127.0.0.1:#{port}/hello"
  seen = -> { File.foreach(log).count { |l| l.include?(":path: /hello") } }
  puts "\nrequest counts (1 s each, nghttpd -v's log as the truth):"
  [["rackbench-engine", method(:engine)], ["h2load", method(:h2load)]].each do |name, tool|
    before = seen.call
    r = tool.call(url, o, 1)
    sleep 0.5 # nghttpd's log catches up (a bench, not a test)
    server = seen.call - before
    verdict = if r[:total] == server then "exact"
              elsif server > r[:total] then "#{server - r[:total]} sent but not counted (in flight when it stopped)"
              else "#{r[:total] - server} more than the server saw"
              end
    puts format("  %-17s reported %7d, server received %7d: %s", name, r[:total], server, verdict)
  end
  stop(pid)

  # 2. Throughput and client CPU, alternating.
  port = free_port
  pid = start_nghttpd(root, port, o[:server_cpu])
  url = "http://127.0.0.1:#{port}/hello"
  runs = { "rackbench-engine" => [], "h2load" => [] }
  o[:reps].times do |i|
    order = i.even? ? %w[rackbench-engine h2load] : %w[h2load rackbench-engine]
    order.each do |name|
      runs[name] << (name == "h2load" ? h2load(url, o, o[:duration_s]) : engine(url, o, o[:duration_s]))
    end
    ratio = runs["rackbench-engine"].last[:rps] / runs["h2load"].last[:rps]
    puts format("rep %d: engine %.0f req/s, h2load %.0f req/s, ratio %.3f", i + 1, runs["rackbench-engine"].last[:rps],
                runs["h2load"].last[:rps], ratio)
  end
  stop(pid)

  puts "\n| tool | req/s (median of #{o[:reps]}) | client CPU us/request | req/s vs h2load | CPU vs h2load |"
  puts "|---|---|---|---|---|"
  figures = runs.transform_values do |rs|
    { rps: median(rs.map { |r| r[:rps] }), cpu_us: median(rs.map { |r| r[:cpu_s] * 1e6 / r[:requests] }) }
  end
  ratios = runs["rackbench-engine"].zip(runs["h2load"]).map { |e, h| e[:rps] / h[:rps] }
  figures.each do |name, f|
    engine_row = name == "rackbench-engine"
    puts format("| %s | %.0f | %.2f | %s | %s |", name, f[:rps], f[:cpu_us],
                engine_row ? format("%.3f (paired median)", median(ratios)) : "",
                engine_row ? format("%.3f", f[:cpu_us] / figures["h2load"][:cpu_us]) : "")
  end
  met = median(ratios) >= TARGET_RPS_RATIO
  puts "\ntarget: engine req/s >= #{TARGET_RPS_RATIO} x h2load's: #{met ? "met" : "NOT met"}"
end
