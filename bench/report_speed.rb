# frozen_string_literal: true

# How long `rackbench report` takes for a large experiment: a synthetic
# results database of CONFIGS configurations x BATCHES batches, each trial
# with a real engine result (histogram and timeline), then the time to
# build the Report (statistics, bootstrap intervals, comparisons), its
# JSON document, the terminal table and the HTML page. Run by hand:
#
#   bundle exec ruby bench/report_speed.rb [--configs 48] [--batches 10]
#
# Figures: doc/performance.md.
require "benchmark"
require "optparse"
require "tmpdir"
require_relative "../lib/rackbench"
require_relative "../test/support/report_store"

options = { configs: 48, batches: 10 }
OptionParser.new do |p|
  p.on("--configs N", Integer) { |v| options[:configs] = v }
  p.on("--batches N", Integer) { |v| options[:batches] = v }
end.parse!

Dir.mktmpdir do |dir|
  configs = Array.new(options[:configs]) do |i|
    dims = ReportStore.dims(ruby: "ruby-#{i % 4}", server: %w[puma falcon unicorn][i / 4 % 3], threads: 1 + i / 12)
    [dims, ReportStore.noisy(1000 + 10 * i, 0.02, options[:batches], i)]
  end.to_h
  Rackbench::Store.open(dir) { |store| ReportStore.fill(store, configs) }
  Rackbench::Store.open(dir) do |store|
    report = nil
    document = nil
    times = {
      "build (statistics, bootstrap, comparisons)" => Benchmark.realtime { report = Rackbench::Report.new(store) },
      "JSON document" => Benchmark.realtime { document = JSON.generate(report.to_h) },
      "terminal table" => Benchmark.realtime { Rackbench::Report::Terminal.new(report).render },
      "HTML page" => Benchmark.realtime { Rackbench::HtmlReport.new(report.to_h).render }
    }
    puts "#{options[:configs]} configurations x #{options[:batches]} batches " \
         "(#{options[:configs] * options[:batches]} trials); JSON #{(document.bytesize / 1e6).round(2)} MB"
    times.each { |what, s| puts format("  %-45s %8.3f s", what, s) }
  end
end
