# frozen_string_literal: true

# The WebSocket echo round trip at low load as each client tool reports it,
# held against the wire's: a packet capture of the loopback (tcpdump)
# taken while the tool runs, one client in closed loop, on the same echo
# server as bench/ws_peers.rb (test/fixtures/ws_server.rb standalone,
# pinned to CPU 0; each client pinned to CPU 1):
#
#   bundle exec ruby bench/ws_wire_rtt.rb [ROUNDS] [--artillery DIR]
#
# The wire's round trip of a message is the time from the capture
# timestamp of the client's TCP segment that completes a WebSocket data
# frame to that of the server's segment that completes the echo, matched
# per TCP connection and in order (pure ACKs carry no bytes and are
# skipped; the HTTP Upgrade and its 101 are consumed before any frame; each
# echo's payload is checked against its message's, unmasked). On the
# loopback a packet is stamped once, as it leaves its sender (inside
# send()), so the wire's time is the server's: its wake-up, its read,
# its echo, plus the kernel's hand-over; what a client adds above it is its
# own stack (its send up to the tap, its receive and wake-up, its stamps).
#
# The tools, alternating within each round (the order reversed every other
# round), each once under capture and once without (so that the capture's
# own cost shows):
# - the engine: -c 1 -d 3s --workload echo; its echo.latency_us (mean, p50,
#   p95) over its measured window; the wire's for the messages sent and
#   echoed inside that window (its edges' Unix times);
# - Tsung (apt-get install tsung): one user, 2,000 messages, each in an
#   "rt" transaction as ws_peers.rb; Tsung logs that transaction's mean,
#   stddev, min and max only (no median, no percentile: "-" below);
# - Artillery (optional, --artillery DIR: a directory where `npm install
#   artillery` was run; its ws engine): one virtual user, 2,000 messages,
#   each a send with a capture (so that it waits for the echo). Artillery's
#   ws engine times no message: its figure is the session's length / 2,000,
#   a cycle (message to next message, its connect included), to be held
#   against the wire's cycle, not the wire's round trip.
# Per tool and round also the wire's cycle (a client's frame to its next)
# and turnaround (an echo on the wire to the client's next frame: the
# client's receive and next send).
#
# Needs tcpdump (apt-get install tcpdump), root (capture), tsung, taskset,
# and the engine built (rake compile).
require "json"
require "open3"
require "tmpdir"
require_relative "support/tsung_echo"

ROOT = File.expand_path("..", __dir__)
ENGINE = File.join(ROOT, "lib/rackbench-engine")
args = ARGV.dup
ARTILLERY_DIR = (i = args.index("--artillery")) && File.expand_path(args.slice!(i, 2)[1])
ROUNDS = Integer(args.fetch(0, "5"))
MESSAGES = 2000
BODY = TsungEcho::BODY

abort "tcpdump not found: apt-get install -y tcpdump" unless system("command -v tcpdump >/dev/null")
abort "tsung not found: apt-get install tsung" unless system("command -v tsung >/dev/null")
abort "engine not built: rake compile" unless File.executable?(ENGINE)
abort "capturing needs root" unless Process.uid.zero?
ARTILLERY = ARTILLERY_DIR && File.join(ARTILLERY_DIR, "node_modules/.bin/artillery")
abort "no artillery in #{ARTILLERY_DIR}/node_modules/.bin (npm install artillery there)" if ARTILLERY && !File.executable?(ARTILLERY)

# A libpcap file (classic format), as tcpdump -w writes it: yields
# [time s (Float), packet bytes, original length] per record.
module Pcap
  LINK_HEADER = { 1 => 14, 113 => 16 }.freeze # Ethernet (lo on Linux), Linux cooked

  def self.each_packet(path)
    data = File.binread(path)
    magic = data.unpack1("V")
    order, divisor = { 0xa1b2c3d4 => ["V", 1e6], 0xa1b23c4d => ["V", 1e9],
                       0xd4c3b2a1 => ["N", 1e6], 0x4d3cb2a1 => ["N", 1e9] }.fetch(magic) { raise "#{path}: not a pcap file" }
    link = data[20, 4].unpack1(order)
    skip = LINK_HEADER.fetch(link) { raise "#{path}: link type #{link} not read here" }
    at = 24
    while at + 16 <= data.bytesize
      sec, frac, caplen, len = data[at, 16].unpack("#{order}4")
      yield sec + frac / divisor, data.byteslice(at + 16 + skip, caplen - skip), len - skip
      at += 16 + caplen
    end
  end

  # [src port, dst port, seq, payload] of an IPv4 TCP packet, or nil.
  def self.tcp(ip, length)
    return unless ip.getbyte(0) >> 4 == 4 && ip.getbyte(9) == 6

    ihl = (ip.getbyte(0) & 0x0f) * 4
    total = ip.byteslice(2, 2).unpack1("n")
    sport, dport, seq = ip.byteslice(ihl, 8).unpack("nnN")
    thl = (ip.getbyte(ihl + 12) >> 4) * 4
    size = total - ihl - thl
    payload = ip.byteslice(ihl + thl, size) || "".b
    raise "a segment was cut by the capture's snap length (#{length} bytes)" if payload.bytesize < size

    [sport, dport, seq, payload]
  end
end

# One direction of one TCP connection: its bytes in sequence order, the
# HTTP head consumed, then WebSocket frames, each with the time of the
# segment that completed it.
class WireDirection
  attr_reader :frames

  def initialize
    @buffer = "".b
    @next_seq = nil
    @in_http = true
    @frames = [] # [time, opcode, payload]
  end

  def add(time, seq, payload)
    return if payload.empty? # a pure ACK (or SYN/FIN)

    @next_seq ||= seq
    ahead = (seq - @next_seq) % 2**32
    raise "a gap in a TCP stream: the capture lost a segment" if ahead.positive? && ahead < 2**31

    behind = ahead.zero? ? 0 : 2**32 - ahead # a retransmission overlapping what we have
    return if behind >= payload.bytesize

    @buffer << payload.byteslice(behind..)
    @next_seq = (@next_seq + payload.bytesize - behind) % 2**32
    parse(time)
  end

  private

  def parse(time)
    if @in_http
      head_end = @buffer.index("\r\n\r\n") or return
      @buffer = @buffer.byteslice((head_end + 4)..)
      @in_http = false
    end
    while (frame = next_frame)
      @frames << [time, *frame]
    end
  end

  def next_frame
    return if @buffer.bytesize < 2

    b0, b1 = @buffer.getbyte(0), @buffer.getbyte(1)
    at = 2
    length = b1 & 0x7f
    if length == 126
      return if @buffer.bytesize < 4

      length = @buffer.byteslice(2, 2).unpack1("n")
      at = 4
    elsif length == 127
      return if @buffer.bytesize < 10

      length = @buffer.byteslice(2, 8).unpack1("Q>")
      at = 10
    end
    mask = nil
    if b1 & 0x80 != 0
      return if @buffer.bytesize < at + 4

      mask = @buffer.byteslice(at, 4).bytes
      at += 4
    end
    return if @buffer.bytesize < at + length

    payload = @buffer.byteslice(at, length)
    payload = payload.bytes.each_with_index.map { |b, i| b ^ mask[i % 4] }.pack("C*") if mask
    @buffer = @buffer.byteslice((at + length)..)
    [b0 & 0x0f, payload]
  end
end

# Per message on the wire: { sent: client frame time, rtt:, cycle:, turnaround: } (seconds),
# from a capture of the server's port; raises if an echo does not match its message.
def wire_messages(pcap, server_port)
  streams = Hash.new { |h, k| h[k] = { up: WireDirection.new, down: WireDirection.new } }
  Pcap.each_packet(pcap) do |time, ip, length|
    sport, dport, seq, payload = Pcap.tcp(ip, length)
    next unless sport

    if dport == server_port
      streams[sport][:up].add(time, seq, payload)
    elsif sport == server_port
      streams[dport][:down].add(time, seq, payload)
    end
  end
  streams.values.flat_map do |s|
    data = ->(dir) { s[dir].frames.select { |_, op| op == 1 || op == 2 } }
    up, down = data.(:up), data.(:down)
    up.each_with_index.filter_map do |(t, _, body), i|
      echo = down[i] or next # the last message, if the capture ended before its echo
      raise "echo #{i} does not match its message" unless echo[2] == body

      following = up[i + 1]
      { sent: t, echoed: echo[0], rtt: echo[0] - t, cycle: following && following[0] - t,
        turnaround: following && following[0] - echo[0] }
    end
  end
end

# Runs the block while tcpdump captures the loopback's traffic to port into
# file; returns [block's value, packets dropped by the kernel].
def captured(file, port)
  cmd = ["tcpdump", "-i", "lo", "-n", "-Z", "root", "-s", "4096", "-B", "16384",
         "--time-stamp-precision=nano", "-w", file, "tcp port #{port}"]
  stdin, _out, err, thread = Open3.popen3(*cmd)
  stdin.close
  loop do
    line = err.gets or raise "tcpdump did not start"
    break if line.include?("listening on")
  end

  value = yield
  sleep 0.2 # the last echo's segments
  Process.kill(:INT, thread.pid)
  rest = err.read
  raise "tcpdump failed: #{rest}" unless thread.value.success? || thread.value.signaled?

  [value, Integer(rest[/(\d+) packets? dropped by kernel/, 1] || 0)]
end

def pinned(*argv, env: {})
  out = IO.popen(env, ["taskset", "-c", "1", *argv], err: File::NULL, &:read)
  raise "#{argv.first} failed: #{$?.inspect}" unless $?.success?

  out
end

# The engine: its own figures (us) and its measured window (Unix s).
def engine_run(port)
  doc = JSON.parse(pinned(ENGINE, "-c", "1", "-d", "3s", "--workload", "echo", "ws://127.0.0.1:#{port}/echo"))
  lat = doc["echo"]["latency_us"]
  { mean: lat["mean"], p50: lat["p50"], p95: lat["p95"], count: doc["echo"]["messages"],
    window: [doc["edges"]["measure_start_unix"], doc["edges"]["measure_end_unix"]] }
end

# Tsung: its "rt" transaction's mean (us) and count, over its dumps.
def tsung_run(port)
  Dir.mktmpdir("ws-wire-tsung") do |dir|
    file = File.join(dir, "echo.xml")
    File.write(file, TsungEcho.config(port: port, users: 1, messages: MESSAGES))
    pinned("tsung", "-f", file, "-l", dir, "start")
    log = Dir[File.join(dir, "*/tsung.log")].first or raise "tsung wrote no log"
    # "stats: tr_rt COUNT MEAN_MS STDDEV MAX MIN ..." per dump: counts add, means weigh by count.
    dumps = File.readlines(log).grep(/^stats: tr_rt /).map { |l| l.split.values_at(2, 3).map(&:to_f) }
    count = dumps.sum(&:first)
    raise "tsung ran no message (see #{log})" if count.zero?

    { mean: dumps.sum { |n, m| n * m } / count * 1000, count: count.to_i }
  end
end

def artillery_config(port)
  <<~YAML
    config:
      target: "ws://127.0.0.1:#{port}/echo"
      phases:
        - duration: 1
          arrivalCount: 1
    scenarios:
      - engine: ws
        flow:
          - loop:
              - send:
                  payload: '#{BODY}'
                  capture:
                    json: "$.rb_seq"
                    as: "seq"
            count: #{MESSAGES}
  YAML
end

# Artillery: its session's length / messages (us): a cycle, not a round trip.
def artillery_run(port)
  Dir.mktmpdir("ws-wire-artillery") do |dir|
    File.write(File.join(dir, "echo.yml"), artillery_config(port))
    out = File.join(dir, "report.json")
    pinned(ARTILLERY, "run", "--output", out, File.join(dir, "echo.yml"),
           env: { "ARTILLERY_DISABLE_TELEMETRY" => "true", "DO_NOT_TRACK" => "1" })
    agg = JSON.parse(File.read(out))["aggregate"]
    received = agg["counters"]["websocket.messages_received"].to_i
    raise "artillery: #{received} of #{MESSAGES} echoes" unless received == MESSAGES

    { mean: agg["summaries"]["vusers.session_length"]["mean"] * 1000.0 / MESSAGES, count: received }
  end
end

def stats_us(seconds)
  v = seconds.compact.sort
  return {} if v.empty?

  { mean: v.sum / v.size * 1e6, p50: v[v.size / 2] * 1e6, p95: v[(v.size * 0.95).ceil - 1] * 1e6, count: v.size }
end

def median(values) = (v = values.compact.sort).empty? ? nil : v[v.size / 2]

TOOLS = { "engine" => method(:engine_run), "tsung" => method(:tsung_run) }
TOOLS["artillery"] = method(:artillery_run) if ARTILLERY

server = IO.popen(["taskset", "-c", "0", RbConfig.ruby, File.join(ROOT, "test/fixtures/ws_server.rb"), "0"])
%w[TERM INT].each { |sig| trap(sig) { raise Interrupt } } # the ensure below stops the server
port = Integer(server.gets[/\d+/])
load_before = File.read("/proc/loadavg").split.first(3).join(" ")
started = Time.now.utc
rows = Hash.new { |h, k| h[k] = [] }
begin
  Dir.mktmpdir("ws-wire") do |dir|
    ROUNDS.times do |round|
      order = round.even? ? TOOLS.keys : TOOLS.keys.reverse
      order.each do |tool|
        pcap = File.join(dir, "#{tool}-#{round}.pcap")
        own, dropped = captured(pcap, port) { TOOLS[tool].call(port) }
        messages = wire_messages(pcap, port)
        if own[:window] # the engine: the messages of its window only
          first, last = own[:window]
          messages.select! { |m| m[:sent] >= first && m[:echoed] <= last }
        end
        bare = TOOLS[tool].call(port) # the same run, no capture
        rows[tool] << { own: own, bare_mean: bare[:mean], dropped: dropped,
                        wire: stats_us(messages.map { |m| m[:rtt] }),
                        cycle: stats_us(messages.map { |m| m[:cycle] }),
                        turnaround: stats_us(messages.map { |m| m[:turnaround] }) }
        r = rows[tool].last
        # Artillery's figure is a cycle: held against the wire's cycle.
        r[:ref] = tool == "artillery" ? r[:cycle][:mean] : r[:wire][:mean]
        warn format("round %d %-9s own mean %.0f us (%d msgs; %.0f uncaptured) | wire mean %.0f p50 %.0f p95 %.0f " \
                    "(%d msgs, %d dropped) | cycle %.0f turnaround %.0f (p50 %.0f) | own/wire %.2f",
                    round + 1, tool, own[:mean], own[:count], bare[:mean], r[:wire][:mean], r[:wire][:p50],
                    r[:wire][:p95], r[:wire][:count], dropped, r[:cycle][:mean], r[:turnaround][:mean], r[:turnaround][:p50],
                    own[:mean] / r[:ref])
      end
    end
  end
ensure
  Process.kill(:TERM, server.pid)
  Process.wait(server.pid)
end

load_after = File.read("/proc/loadavg").split.first(3).join(" ")
fmt = ->(v) { v ? format("%.0f", v) : "-" }
puts "#{started.strftime("%Y-%m-%d %H:%M")}-#{Time.now.utc.strftime("%H:%M")} UTC, #{ROUNDS} rounds, " \
     "load #{load_before} -> #{load_after}; medians over rounds, us"
puts "| tool | own mean | own p50 | own p95 | wire mean | wire p50 | wire p95 | own/wire (means)* | own - wire* | " \
     "wire cycle mean | p50 | wire turnaround mean | p50 | own mean uncaptured | messages/round | dropped |"
puts "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
rows.each do |tool, rs|
  m = ->(&f) { median(rs.map(&f)) }
  puts format("| %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %d |", tool,
              fmt.(m.() { |r| r[:own][:mean] }), fmt.(m.() { |r| r[:own][:p50] }), fmt.(m.() { |r| r[:own][:p95] }),
              fmt.(m.() { |r| r[:wire][:mean] }), fmt.(m.() { |r| r[:wire][:p50] }), fmt.(m.() { |r| r[:wire][:p95] }),
              m.() { |r| r[:own][:mean] / r[:ref] }, fmt.(m.() { |r| r[:own][:mean] - r[:ref] }),
              fmt.(m.() { |r| r[:cycle][:mean] }), fmt.(m.() { |r| r[:cycle][:p50] }),
              fmt.(m.() { |r| r[:turnaround][:mean] }), fmt.(m.() { |r| r[:turnaround][:p50] }),
              fmt.(m.() { |r| r[:bare_mean] }),
              fmt.(m.() { |r| r[:wire][:count] }), rs.sum { |r| r[:dropped] })
end
puts "* Artillery's own figure is a cycle: against the wire's cycle, not its round trip." if rows.key?("artillery")
rows.each do |tool, rs|
  puts format("%s own/wire per round (mean): %s", tool, rs.map { |r| format("%.2f", r[:own][:mean] / r[:ref]) }.join(", "))
end
