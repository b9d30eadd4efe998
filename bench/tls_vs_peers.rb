#!/usr/bin/env ruby
# frozen_string_literal: true

# The engine over TLS side by side with its peers on the same nginx (one
# worker pinned to CPU 0; the client under test pinned to CPU 1, one
# client thread):
#
#   HTTP/1.1 + TLS, kept-alive connections       engine vs wrk
#   HTTP/1.1 + TLS, a new connection per request engine vs wrk (Connection: close: nginx closes)
#   h2 + TLS (ALPN), streams per connection      engine vs h2load
#
#   bundle exec ruby bench/tls_vs_peers.rb [--reps 5] [--duration 5] [--connections 50]
#                                          [--h2-connections 4] [--streams 8]
#
# The certificate is rackbench's own (Rackbench::Tls: an authority and an
# RSA 2048 server certificate), made into a temporary directory. wrk and
# h2load do not check certificates; the engine runs with --insecure here
# so that every client does the same work (a checked chain costs the
# engine a verification per full handshake; see --verify).
#
# Two parts:
# 1. Counts: one short run of each tool against an nginx that logs every
#    request with its connection and whether its TLS session was resumed
#    ($ssl_session_reused): each tool's count of completed requests is
#    compared with the server's, and each tool's share of resumed sessions
#    is the server's own.
# 2. Throughput and client CPU, repetitions alternating the order of the
#    tools (the machine's drift lands on both; shared/MEASUREMENT.md):
#    requests/s as each tool reports it, and client CPU per request from
#    the kernel's accounting of each child (user + system over its whole
#    life, handshakes included) over the requests it completed. Ratios are
#    the medians of each repetition's pair.
require "json"
require "optparse"
require "open3"
require "socket"
require "tmpdir"
require "etc"
require_relative "../lib/rackbench"
require_relative "../test/support/nginx_server"

ROOT = File.expand_path("..", __dir__)
ENGINE = File.join(ROOT, "lib/rackbench-engine")

options = { reps: 5, duration_s: 5, connections: 50, h2_connections: 4, streams: 8, server_cpu: 0, client_cpu: 1,
            verify: false }
OptionParser.new do |o|
  o.on("--reps N", Integer) { |v| options[:reps] = v }
  o.on("--duration S", Integer) { |v| options[:duration_s] = v }
  o.on("--connections N", Integer, "HTTP/1.1 connections (default 50)") { |v| options[:connections] = v }
  o.on("--h2-connections N", Integer, "h2 connections (default 4)") { |v| options[:h2_connections] = v }
  o.on("--streams N", Integer, "h2 streams per connection (default 8)") { |v| options[:streams] = v }
  o.on("--verify", "the engine checks the certificate (--cacert) instead of --insecure") { options[:verify] = true }
end.parse!

abort "build the engine first: bin/setup" unless File.executable?(ENGINE)
%w[nginx wrk h2load taskset].each { |tool| abort "#{tool} not found: bin/setup installs it" unless system("command -v #{tool} >/dev/null") }

def free_port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }

# nginx with two TLS servers: +logged+ logs each request (part 1), +quiet+
# logs nothing (part 2). Both speak http/1.1 and h2 (ALPN).
def start_nginx(dir, cert, logged, quiet, cpu)
  NginxServer.start(dir, <<~HTTP, ports: [logged, quiet], cpu: cpu)
    http2_max_requests 100000000;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_certificate #{cert.cert_path};
    ssl_certificate_key #{cert.key_path};
    ssl_session_cache shared:TLS:10m;
    log_format counts '$connection $connection_requests $ssl_session_reused $server_protocol $ssl_protocol';
    server {
      listen 127.0.0.1:#{logged} ssl http2;
      access_log #{dir}/access.log counts;
      location / { return 200 "hello world\\n"; }
    }
    server {
      listen 127.0.0.1:#{quiet} ssl http2;
      location / { return 200 "hello world\\n"; }
    }
  HTTP
end

# Runs argv as a child; returns [stdout, cpu_s of the child].
def run_child(argv)
  before = Process.times
  out, status = Open3.capture2(*argv)
  after = Process.times
  abort "#{argv.first(6).join(" ")} failed: #{status}" unless status.success?
  [out, (after.cutime - before.cutime) + (after.cstime - before.cstime)]
end

def pinned(o, *argv) = ["taskset", "-c", o[:client_cpu].to_s, *argv]

def engine_tls_flags(o, cert) = o[:verify] ? ["--cacert", cert.ca_path] : ["--insecure"]

# Each tool for each case: returns { requests:, rps:, cpu_s: }.
def engine_run(kase, url, o, cert, duration_s)
  argv = [ENGINE, "-t", "1", "-d", "#{duration_s}s", *engine_tls_flags(o, cert)]
  argv += case kase
          when :keepalive then ["-c", o[:connections].to_s]
          when :close then ["-c", o[:connections].to_s, "-H", "Connection: close"]
          when :h2 then ["--protocol", "h2", "-c", o[:h2_connections].to_s, "--streams", o[:streams].to_s]
          end
  out, cpu_s = run_child(pinned(o, *argv, url))
  doc = JSON.parse(out)
  errors = doc["errors"].select { |_, n| n.positive? }
  warn "engine errors: #{errors}" unless errors.empty?
  { requests: doc["requests"], rps: doc["rps"], cpu_s: cpu_s, tls: doc["tls"] }
end

def peer_run(kase, url, o, duration_s)
  if kase == :h2
    out, cpu_s = run_child(pinned(o, "h2load", "-t", "1", "-c", o[:h2_connections].to_s, "-m", o[:streams].to_s,
                                  "-D", duration_s.to_s, url))
    done = out[/requests: .*?(\d+) succeeded/, 1].to_i
    return { requests: done, rps: out[/finished in [\d.]+s, ([\d.]+) req\/s/, 1].to_f, cpu_s: cpu_s }
  end
  argv = ["wrk", "-t1", "-c#{o[:connections]}", "-d#{duration_s}s"]
  argv += ["-H", "Connection: close"] if kase == :close
  out, cpu_s = run_child(pinned(o, *argv, url))
  errors = out[/Socket errors: .*/]
  warn "wrk #{errors}" if errors
  { requests: out[/(\d+) requests in/, 1].to_i, rps: out[%r{Requests/sec:\s+([\d.]+)}, 1].to_f, cpu_s: cpu_s }
end

def median(values)
  s = values.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

def loadavg = File.read("/proc/loadavg").split.first(3).join(" ")

CASES = {
  keepalive: ["HTTP/1.1 + TLS, kept-alive", "wrk"],
  close: ["HTTP/1.1 + TLS, a connection per request", "wrk"],
  h2: ["h2 + TLS", "h2load"]
}.freeze

Dir.mktmpdir("tls-bench") do |dir|
  o = options
  cert = Rackbench::Tls.certificate(File.join(dir, "tls"))
  logged = free_port
  quiet = free_port
  wrk_version = `wrk --version 2>&1`[%r{wrk \S*?([\d.]+[-\w.+]*)}, 1]
  h2load_version = `h2load --version`[%r{nghttp2/([\d.]+)}, 1]
  puts "machine: #{File.read("/proc/cpuinfo")[/model name\s*: (.*)/, 1]}, #{Etc.nprocessors} CPUs, " \
       "load average #{loadavg} at the start; wrk #{wrk_version}, h2load #{h2load_version}, #{`openssl version`.strip}"
  puts "nginx #{`nginx -v 2>&1`[%r{nginx/([\d.]+)}, 1]} (1 worker) on CPU #{o[:server_cpu]}, client on CPU " \
       "#{o[:client_cpu]}, one client thread; HTTP/1.1: #{o[:connections]} connections; h2: #{o[:h2_connections]} " \
       "connections x #{o[:streams]} streams; engine #{o[:verify] ? "checks the certificate" : "--insecure (as the peers)"}"
  pid = start_nginx(dir, cert, logged, quiet, o[:server_cpu])
  begin
    # 1. Counts and resumption, from nginx's log.
    log = File.join(dir, "access.log")
    lines = -> { File.exist?(log) ? File.readlines(log) : [] }
    puts "\nrequest counts and TLS sessions (1 s each; nginx's log as the truth):"
    CASES.each do |kase, (name, peer)|
      [["rackbench-engine", ->(u) { engine_run(kase, u, o, cert, 1) }], [peer, ->(u) { peer_run(kase, u, o, 1) }]].each do |tool, run|
        before = lines.call.size
        r = run.call("https://127.0.0.1:#{logged}/")
        sleep 0.5 # nginx's log catches up (a bench, not a test)
        seen = lines.call.drop(before)
        firsts = seen.select { |l| l.split[1] == "1" } # each connection's first request: its handshake
        resumed = firsts.count { |l| l.split[2] == "r" }
        protocol = seen.first&.split&.values_at(3, 4)&.join(" ")
        puts format("  %-42s %-17s reported %6d, nginx logged %6d (%s); %d connections, %d resumed",
                    name, tool, r[:requests], seen.size, protocol, firsts.size, resumed)
      end
    end

    # 2. Throughput and client CPU, alternating.
    url = "https://127.0.0.1:#{quiet}/"
    results = Hash.new { |h, k| h[k] = Hash.new { |hh, kk| hh[kk] = [] } }
    o[:reps].times do |rep|
      CASES.each do |kase, (name, peer)|
        order = rep.even? ? [:engine, :peer] : [:peer, :engine]
        order.each do |who|
          r = who == :engine ? engine_run(kase, url, o, cert, o[:duration_s]) : peer_run(kase, url, o, o[:duration_s])
          results[kase][who] << r
          warn format("rep %d %-42s %-16s %8.0f req/s %8.2f us/req CPU  (load %s)", rep + 1, name,
                      who == :engine ? "rackbench-engine" : peer, r[:rps], r[:cpu_s] * 1e6 / r[:requests], loadavg)
        end
      end
    end

    puts "\n| case | tool | req/s (median of #{o[:reps]}) | client CPU µs/request (median) | req/s vs peer (paired median) | CPU/request vs peer (paired median) |"
    puts "|---|---|---|---|---|---|"
    CASES.each do |kase, (name, peer)|
      runs = results[kase]
      cpu = ->(r) { r[:cpu_s] * 1e6 / r[:requests] }
      rps_ratios = runs[:engine].zip(runs[:peer]).map { |e, p| e[:rps] / p[:rps] }
      cpu_ratios = runs[:engine].zip(runs[:peer]).map { |e, p| cpu.(e) / cpu.(p) }
      puts format("| %s | rackbench-engine | %.0f | %.2f | %.3f | %.3f |", name, median(runs[:engine].map { |r| r[:rps] }),
                  median(runs[:engine].map(&cpu)), median(rps_ratios), median(cpu_ratios))
      puts format("| %s | %s | %.0f | %.2f | | |", name, peer, median(runs[:peer].map { |r| r[:rps] }),
                  median(runs[:peer].map(&cpu)))
      puts format("  %s paired req/s ratios: %s; CPU ratios: %s", name, rps_ratios.map { |x| format("%.3f", x) }.join(", "),
                  cpu_ratios.map { |x| format("%.3f", x) }.join(", "))
    end
    puts "\nTarget: at least the peer's req/s at no more client CPU per request (paired medians):"
    CASES.each do |kase, (name, peer)|
      runs = results[kase]
      cpu = ->(r) { r[:cpu_s] * 1e6 / r[:requests] }
      rps = median(runs[:engine].zip(runs[:peer]).map { |e, p| e[:rps] / p[:rps] })
      cpu_ratio = median(runs[:engine].zip(runs[:peer]).map { |e, p| cpu.(e) / cpu.(p) })
      puts format("  %-42s vs %-6s req/s %.3f %s, CPU/request %.3f %s", name, peer, rps, rps >= 1.0 ? "met" : "NOT met",
                  cpu_ratio, cpu_ratio <= 1.0 ? "met" : "NOT met")
    end
    puts "load average at the end: #{loadavg}"
  ensure
    NginxServer.stop(pid)
  end
end
