# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# Capacity against a known ceiling (issue 13): the io-wait app told to
# sleep 100 ms per request (?ms=100), so Puma with 1 process x 4 threads
# serves at most 40 req/s. The search with p99 <= 200 ms must land in
# 30-40 req/s (never above the ceiling; within a quarter below it, where
# other work on the machine delays the threads' wake-ups), and its curve
# must show the knee: the p99 of the first
# failing rate far above the answer's. One search, shared by the
# assertions, of four steps (4 s each): it starts at 35 req/s and ramps by
# 1.2, so with a 10% resolution the second step (42) fails and one
# bisection step (38.5) and one confirmation finish it. Starting there
# proves nothing in advance: a server slower than 35 fails the first step,
# the search ramps down and lands under 35. (The search's own logic, ramp
# and all, is tested in capacity_search_test.)
#
# Why 100 ms and not 10 (as it was): every request sleeps, then waits for
# a CPU to wake its thread. At 10 ms a request, a machine busy with other
# work made each wake-up late by a large part of the sleep, the real
# ceiling dropped (about 300 req/s with two compilers running here) and a
# CI run at load 10 failed; at 100 ms, 40 requests a second need a few
# percent of a CPU, and a late wake-up costs a tenth as much of a request
# (at load 9 here: p99 140 ms at 29 and 32 req/s, so an effective ceiling
# near 36, and a capacity of 32 from a first step at 35 that failed). The
# margins on a quiet machine, from the open loop's even schedule:
# below the ceiling a request waits for no thread (p99 about 100 ms plus
# the wake-ups); 5% above it (42 req/s), 2 requests a second queue up, and
# by the end of a 4-s step the last ones wait 200 ms more (p99 about
# 300 ms): 100 ms on either side of the target.
describe "rackbench capacity (integration)" do
  before { require_engine! }

  CEILING_RPS = 40 # 4 threads / 100 ms
  TARGET_P99_US = 200_000

  def self.search
    @search ||= begin
      dir = Dir.mktmpdir("rackbench-capacity")
      file = File.join(dir, "io-wait.yml")
      File.write(file, <<~YAML)
        name: capacity-io-wait
        seed: 3
        batches: 1
        servers: [puma]
        apps: [{ name: io-wait, load_path: "/?ms=100", expect_body: "waited 100 ms" }]
        processes: 1
        threads: 4
        load: { connections: 64, duration: 4s, warmup: 0.3s }
        capacity: { p99: 200ms, start_rate: 35, ramp: 1.2, resolution: 10%, confirmations: 1 }
      YAML
      results = File.join(dir, "results")
      out, err, status = rackbench("capacity", file, "--results", results, "--json")
      Minitest.after_run { FileUtils.rm_rf(dir) }
      { out: out, err: err, status: status, results: results }
    end
  end

  let(:search) { self.class.search }
  let(:doc) { JSON.parse(search[:out]) }
  let(:config) { doc["configs"].first }
  let(:steps) { config["searches"].first["steps"] }

  it "finds the capacity in 30-40 req/s within a few steps" do
    assert search[:status].success?, "exit #{search[:status].exitstatus}: #{search[:err]}"
    assert_equal "rackbench-capacity", doc["format"]
    assert_operator config["capacity_rps"], :>=, 0.75 * CEILING_RPS, search[:err]
    assert_operator config["capacity_rps"], :<=, CEILING_RPS, search[:err]
    assert_operator config["steps_run"], :<=, 6
    assert_equal (config["capacity_rps"] * 86_400).round, config["requests_per_day"]
    assert_operator config["latency_us"]["p99"], :<=, TARGET_P99_US
  end

  # The knee: within one resolution above the answer the target breaks,
  # and past the ceiling the queue grows for the whole window, so the
  # highest rate offered has a p99 well above the answer's (a ratio, no
  # figure in ms: how far it climbs depends on the machine).
  it "shows the knee: p99 breaks the target just above the answer and climbs past the ceiling" do
    answer = config["capacity_rps"] or flunk("no capacity found: #{search[:err]}")
    at_answer = steps.select { |s| s["rate"] == answer && s["status"] == "pass" }.map { |s| s["latency_us"]["p99"] }
    failing = steps.select { |s| s["status"] == "fail" && s["rate"] > answer }
    refute_empty failing, "a failing step above the answer: #{steps.map { |s| [s["rate"], s["status"]] }.inspect}"
    assert_operator failing.min_by { |s| s["rate"] }["rate"] - answer, :<=, 0.1 * answer + 1
    assert(failing.all? { |s| s["latency_us"]["p99"] > TARGET_P99_US }, search[:err])
    assert_operator failing.max_by { |s| s["rate"] }["latency_us"]["p99"], :>, 2 * at_answer.max, search[:err]
  end

  it "stores every step, and writes the curve to capacity.html" do
    html = File.read(File.join(search[:results], "capacity.html"))
    assert html.include?(%(id="chart-capacity-1")), "the curve's chart is in capacity.html"
    assert html.include?("capacity #{Rackbench::Units.rate_rounded(config["capacity_rps"])} req/s"),
           "the answer is marked on the curve"
    stored = Rackbench::Store.open(search[:results], &:experiments).map { |e| e[:name] }
    assert_equal steps.map { |s| format("capacity-io-wait.capacity.c1.b1.s%02d.r%d", s["index"], s["rate"]) }, stored
    assert_match(/\[c1 b1\] step 1 ramp 35 req\/s: (pass|fail)/, search[:err])
  end
end
