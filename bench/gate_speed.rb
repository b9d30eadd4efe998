# frozen_string_literal: true

# How long the gate and the history take on stored results: a synthetic
# baseline and candidate of CONFIGS configurations x BATCHES batches (each
# trial with a real engine result), gated on THRESHOLDS figures (each check
# at the family's confidence, so more resamples per interval as the gate
# grows); then a history of RUNS runs of CONFIGS configurations in one
# results directory. Run by hand:
#
#   bundle exec ruby bench/gate_speed.rb [--configs 50] [--batches 10] [--runs 20]
#
# Figures: doc/performance.md.
require "benchmark"
require "optparse"
require "tmpdir"
require_relative "../lib/rackbench"
require_relative "../test/support/report_store"

options = { configs: 50, batches: 10, runs: 20 }
OptionParser.new do |p|
  p.on("--configs N", Integer) { |v| options[:configs] = v }
  p.on("--batches N", Integer) { |v| options[:batches] = v }
  p.on("--runs N", Integer) { |v| options[:runs] = v }
end.parse!

def configs(options, seed)
  Array.new(options[:configs]) do |i|
    [ReportStore.dims(ruby: "ruby", threads: i + 1), ReportStore.noisy(1000, 0.02, options[:batches], seed * 1000 + i)]
  end.to_h
end

Dir.mktmpdir do |dir|
  reports = %w[main pr].each_with_index.map do |name, i|
    Rackbench::Store.open(File.join(dir, name)) do |store|
      ReportStore.fill(store, configs(options, i), name: "bench")
      Rackbench::Report.new(store)
    end
  end
  [["rps>2%"], ["rps>2%", "p99>10%", "memory>5%"]].each do |texts|
    rules = Rackbench::Gate::Rule.parse_all(texts)
    gate = nil
    s = Benchmark.realtime do
      gate = Rackbench::Gate.between(Rackbench::Report::Compare.experiments(*reports), *reports, rules: rules)
    end
    markdown = Rackbench::Gate::Markdown.new(JSON.parse(JSON.generate(gate.to_h))).render
    puts format("gate: %d configurations x %d batches, %s: %.2f s (%d checks at %.3f%%), status %s; Markdown %d lines, " \
                "%d before the fold", options[:configs], options[:batches], texts.join(","), s,
                gate.to_h["settings"]["checks"], gate.confidence * 100, gate.status, markdown.lines.size,
                markdown.split("<details>").first.lines.size)
  end

  history = File.join(dir, "history")
  Rackbench::Store.open(history) do |store|
    options[:runs].times do |i|
      labels = Rackbench::Labels.new(given: { "run" => i.to_s }, revisions: [])
      ReportStore.fill(store, configs(options, 10 + i), name: "bench", labels: labels)
    end
  end
  runs = nil
  read_s = Benchmark.realtime { runs = Rackbench::Series.collect([history]) }
  series_s = Benchmark.realtime do
    Rackbench::Series.new(runs, figure: Rackbench::Report::BatchFigures.fetch("rps"),
                                options: Rackbench::Report::Options.new).to_h
  end
  puts format("history: %d runs x %d configurations x %d batches: reading the runs %.2f s, the series %.2f s",
              options[:runs], options[:configs], options[:batches], read_s, series_s)
end
