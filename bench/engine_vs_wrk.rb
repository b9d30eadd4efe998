#!/usr/bin/env ruby
# frozen_string_literal: true

# Side-by-side comparison of rackbench's load engine with wrk (Debian's),
# both against the same nginx: nginx has one worker pinned to CPU 0, the
# client under test is pinned to CPU 1. Repetitions alternate between the
# tools so slow drift of the machine lands on both, and only medians and
# same-run ratios are reported (single runs of one tool swing by 2x here).
#
#   bundle exec ruby bench/engine_vs_wrk.rb [--reps 3] [--duration 10] [--connections 50] [--memory-run]
#
# Client CPU per request comes from the kernel's accounting of each child
# (user + system over its whole life) divided by the requests it completed;
# peak memory from GNU time's maximum resident set size.
require "json"
require "optparse"
require "open3"
require "socket"
require "tmpdir"
require_relative "../test/support/nginx_server"

ROOT = File.expand_path("..", __dir__)
ENGINE = File.join(ROOT, "lib/rackbench-engine")
# Issue 2's targets as re-scoped, as same-run ratios of medians to wrk's:
# [case, figure, comparison, bound]
TARGETS = [
  ["keep-alive", :cpu_us_per_request, :<=, 0.92],
  ["Connection: close", :rps, :>=, 1.0]
].freeze

options = { reps: 3, duration_s: 10, connections: 50, memory_run: false, server_cpu: 0, client_cpu: 1 }
OptionParser.new do |o|
  o.on("--reps N", Integer) { |v| options[:reps] = v }
  o.on("--duration S", Integer) { |v| options[:duration_s] = v }
  o.on("--connections N", Integer) { |v| options[:connections] = v }
  o.on("--memory-run", "also run the engine for 10 million requests and report its peak RSS") { options[:memory_run] = true }
end.parse!

abort "build the engine first: bin/setup" unless File.executable?(ENGINE)
%w[nginx wrk taskset].each { |tool| abort "#{tool} not found: bin/setup installs it" unless system("command -v #{tool} >/dev/null") }

def free_port
  TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
end

def start_nginx(dir, port, cpu)
  NginxServer.start(dir, <<~HTTP, ports: [port], cpu: cpu)
    server {
      listen 127.0.0.1:#{port};
      location / { return 200 "hello world\\n"; }
    }
  HTTP
end

# Runs argv pinned to the client CPU under GNU time; returns [stdout, cpu_s, max_rss_bytes].
def run_client(argv, cpu)
  Dir.mktmpdir do |dir|
    time_file = File.join(dir, "time")
    out, err, status = Open3.capture3("/usr/bin/time", "-f", "%U %S %M", "-o", time_file,
                                      "taskset", "-c", cpu.to_s, *argv)
    raise "#{argv.first} failed: #{err}" unless status.success?

    user_s, system_s, rss_kb = File.read(time_file).split.map(&:to_f)
    [out, user_s + system_s, (rss_kb * 1024).to_i]
  end
end

def wrk(url, connections, duration_s, headers, cpu)
  argv = ["wrk", "-t1", "-c#{connections}", "-d#{duration_s}s"]
  headers.each { |h| argv.push("-H", h) }
  out, cpu_s, rss = run_client(argv << url, cpu)
  requests = out[/(\d+) requests in/, 1].to_i
  rps = out[%r{Requests/sec:\s+([\d.]+)}, 1].to_f
  { rps: rps, requests: requests, cpu_us_per_request: cpu_s * 1e6 / requests, rss_bytes: rss }
end

def engine(url, connections, duration_s, headers, cpu, keepalive: true)
  argv = [ENGINE, "-t", "1", "-c", connections.to_s, "-d", "#{duration_s}s"]
  headers.each { |h| argv.push("-H", h) }
  argv << "--no-keepalive" unless keepalive
  out, cpu_s, rss = run_client(argv << url, cpu)
  doc = JSON.parse(out)
  errors = doc["errors"].values.sum
  warn "engine reported #{errors} errors" if errors.positive?
  { rps: doc["rps"], requests: doc["requests"], cpu_us_per_request: cpu_s * 1e6 / doc["requests"], rss_bytes: rss,
    saturated: doc["cpu"]["saturated"] }
end

def median(values)
  sorted = values.sort
  mid = sorted.size / 2
  sorted.size.odd? ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0
end

def load_average = File.read("/proc/loadavg").split.first(3).join(" ")

# Each target's verdict from the medians of this run.
def target_lines(results)
  TARGETS.map do |name, figure, op, bound|
    engine = median(results[name][:engine].map { |r| r[figure] })
    wrk = median(results[name][:wrk].map { |r| r[figure] })
    ratio = engine / wrk
    label = figure == :rps ? "req/s" : "client CPU per request"
    format("Target: %s %s %s %.2fx wrk's: %s (%.3fx)", name, label, op, bound, ratio.send(op, bound) ? "met" : "NOT met",
           ratio)
  end
end

# engine/wrk ratios of the runs made back to back in each repetition: on
# a busy machine the load drifts between repetitions, and a pair shares it.
def paired_ratio_lines(results)
  TARGETS.map(&:first).uniq.flat_map do |name|
    %i[rps cpu_us_per_request].map do |figure|
      ratios = results[name][:engine].zip(results[name][:wrk]).map { |e, w| e[figure] / w[figure] }
      format("Same-repetition %s %s ratios: median %.3f (%s)", name, figure == :rps ? "req/s" : "CPU per request",
             median(ratios), ratios.map { |r| format("%.3f", r) }.join(", "))
    end
  end
end

Dir.mktmpdir("rackbench-bench") do |dir|
  warn "load average (1, 5, 15 min) at the start: #{load_average}"
  port = free_port
  url = "http://127.0.0.1:#{port}/"
  nginx = start_nginx(dir, port, options[:server_cpu])
  begin
    cases = {
      "keep-alive" => { headers: [], engine_keepalive: true },
      "Connection: close" => { headers: ["Connection: close"], engine_keepalive: true }
    }
    results = Hash.new { |h, k| h[k] = {} }
    c = options[:connections]
    d = options[:duration_s]
    cpu = options[:client_cpu]
    options[:reps].times do |rep|
      cases.each do |name, spec|
        # Alternate which tool goes first in each repetition.
        order = rep.even? ? %i[engine wrk] : %i[wrk engine]
        order.each do |tool|
          r = tool == :wrk ? wrk(url, c, d, spec[:headers], cpu) : engine(url, c, d, spec[:headers], cpu)
          (results[name][tool] ||= []) << r
          warn format("rep %d %-18s %-6s %9.0f req/s  %6.2f us/req CPU  %5.1f MB", rep + 1, name, tool, r[:rps],
                      r[:cpu_us_per_request], r[:rss_bytes] / 1e6)
        end
      end
      r = engine(url, c, d, [], cpu, keepalive: false)
      (results["--no-keepalive (client-side close)"][:engine] ||= []) << r
      warn format("rep %d %-18s %-6s %9.0f req/s  %6.2f us/req CPU", rep + 1, "--no-keepalive", "engine", r[:rps],
                  r[:cpu_us_per_request])
    end

    puts "| case | tool | req/s (median) | client CPU us/request (median) | peak RSS MB | req/s ratio vs wrk | CPU ratio vs wrk |"
    puts "|---|---|---|---|---|---|---|"
    results.each do |name, by_tool|
      wrk_runs = by_tool.fetch(:wrk, [])
      wrk_rps = wrk_runs.empty? ? nil : median(wrk_runs.map { |r| r[:rps] })
      wrk_cpu = wrk_runs.empty? ? nil : median(wrk_runs.map { |r| r[:cpu_us_per_request] })
      by_tool.each do |tool, runs|
        rps = median(runs.map { |r| r[:rps] })
        cpu_us = median(runs.map { |r| r[:cpu_us_per_request] })
        rss = runs.map { |r| r[:rss_bytes] }.max / 1e6
        ratio = wrk_rps && tool == :engine ? format("%.3f", rps / wrk_rps) : ""
        cpu_ratio = wrk_cpu && tool == :engine ? format("%.3f", cpu_us / wrk_cpu) : ""
        puts format("| %s | %s | %.0f | %.2f | %.1f | %s | %s |", name, tool, rps, cpu_us, rss, ratio, cpu_ratio)
      end
    end

    puts
    puts paired_ratio_lines(results)
    puts target_lines(results)
    puts "Load average (1, 5, 15 min) at the end: #{load_average}"

    if options[:memory_run]
      rps = median(results["keep-alive"][:engine].map { |r| r[:rps] })
      seconds = (10_000_000 / rps * 1.05).ceil
      r = engine(url, c, seconds, [], cpu)
      puts
      puts format("Memory run: %d requests in %ds, peak RSS %.1f MB", r[:requests], seconds, r[:rss_bytes] / 1e6)
    end
  ensure
    NginxServer.stop(nginx)
  end
end
