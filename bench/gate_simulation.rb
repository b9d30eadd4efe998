# frozen_string_literal: true

# How often the gate fails an unchanged candidate (A/A), and how often it
# catches a real slowdown, by simulation: normal batch-to-batch noise, the
# gate's own judge (Gate::Judge) and thresholds, with each check's interval
# at 95% ("per check") or at the family's confidence over every check of
# the gate (Stats.family_confidence, what `rackbench gate` does).
#
#   bundle exec ruby bench/gate_simulation.rb [GATES]
#
# GATES simulated gates per row (default 200; a quarter of it for 50
# configurations, whose 99.9% intervals take 20,000 resamples each).
# Results: doc/methodology.md, "The regression gate".
require_relative "../lib/rackbench"

$stdout.sync = true
GATES = Integer(ARGV.fetch(0, "200"))
CV = 0.02
LIMIT = "rps>2%"

Config = Struct.new(:rps_values)

def batches(random, n, mean)
  Array.new(n) do
    u1 = 1.0 - random.rand
    mean * (1 + CV * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math::PI * random.rand))
  end
end

# The share of GATES gates of +configs+ pairs of +n+ batches each that
# regress, the first pair's candidate +slowdown+ slower (0: A/A).
def failing_share(configs:, n:, slowdown:, family:, seed:, gates:)
  random = Random.new(seed)
  rule = Rackbench::Gate::Rule.parse(LIMIT)
  options = Rackbench::Report::Options.new(min_batches: 5, resamples: 2000)
  confidence = family ? Rackbench::Stats.family_confidence(0.95, configs) : 0.95
  judge = Rackbench::Gate::Judge.new(options, confidence: confidence)
  failed = Array.new(gates) do
    Array.new(configs) do |i|
      pair = Rackbench::Gate::Pair.new("c#{i}", Config.new(batches(random, n, 1000.0)),
                                       Config.new(batches(random, n, 1000.0 * (i.zero? ? 1 - slowdown : 1))))
      judge.check(pair, rule).status == Rackbench::Gate::REGRESSED
    end.any?
  end
  failed.count(true).fdiv(gates)
end

puts "#{GATES} gates per row (#{GATES / 4} with 50 configurations), batch CV #{(CV * 100).round(1)}%, threshold #{LIMIT}, 95% confidence"
puts format("%-8s %-8s %-10s %-22s %-22s", "configs", "batches", "slowdown", "fails, 95% per check", "fails, family (gate)")
[[1, 5], [1, 10], [10, 10], [50, 10]].each do |configs, n|
  [0.0, 0.05].each do |slowdown|
    gates = configs >= 50 ? GATES / 4 : GATES
    rows = [false, true].map do |family|
      failing_share(configs: configs, n: n, slowdown: slowdown, family: family, seed: configs * 100 + n, gates: gates)
    end
    puts format("%-8d %-8d %-10s %-22s %-22s", configs, n, "#{(slowdown * 100).round}%",
                *rows.map { |share| "#{(share * 100).round(1)}%" })
  end
end
