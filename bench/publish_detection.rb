# frozen_string_literal: true

# How often publish's step detection is wrong over many simulated years
# (doc/performance.md, doc/publish.md): the year of
# test/support/nightly_history.rb (20 configurations, 62 series, per-series
# CV 0.1% to 5%, steps of 0.5%, 2% and 5%, the 2% one reverted) drawn with
# YEARS seeds, each series run through Stats::StepDetection as publish
# runs it, without a store. Counts, per year: regressions no step
# explains (false), each step found in its main series at a range that
# holds its commit (and how many nights after it landed it was found),
# the ranges' widths, the reverted step marked fixed.
#
#   bundle exec ruby -Ilib -Itest bench/publish_detection.rb [YEARS]
require "rackbench"
require_relative "../test/support/nightly_history"

years = Integer(ARGV.first || 20)
configs = NightlyHistory.configs
steps = NightlyHistory.steps
settings = Rackbench::Publish::Settings.new
false_per_year = []
found = Hash.new(0)
delays = Hash.new { |h, k| h[k] = [] }
widths = Hash.new(0)
fixed = 0
started = Process.clock_gettime(Process::CLOCK_MONOTONIC)

years.times do |year|
  nights = Array.new(NightlyHistory::NIGHTS) { |n| NightlyHistory.night_values(n, configs, seed: 1000 + year) }
  falses = 0
  configs.each_with_index do |config, c|
    config.figures.each_key do |name|
      figure = Rackbench::Report::BatchFigures.fetch(name)
      medians = nights.map { |night| Rackbench::Stats.median(night[c][name]) }
      intervals = nights.map { |night| Rackbench::Stats.median_interval(night[c][name]) }
      detection = Rackbench::Stats::StepDetection.new(
        medians, intervals: intervals, worse: figure.better == :higher ? "down" : "up",
                 settings: Rackbench::Stats::StepDetection::Settings.new(equivalence: settings.equivalence_of(figure))
      )
      detection.steps.select { |s| s.direction == (figure.better == :higher ? "down" : "up") }.each do |s|
        step = steps.find { |st| st.config == c && st.figures.key?(name) && (s.first - 1..s.last).cover?(st.night) }
        unless step
          falses += 1
          next
        end
        next unless step.primary == name

        found[step.night] += 1
        delays[step.night] << s.found_at - step.night
        widths[s.last - s.first + 1] += 1
        fixed += 1 if step.reverted_at && s.fixed_at
      end
    end
  end
  false_per_year << falses
end

elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
puts "#{years} simulated years of #{configs.size} configurations (#{format("%.0f", elapsed)} s):"
puts "  regressions no step explains, per year: #{false_per_year.tally.sort.map { |n, k| "#{n}: #{k} years" }.join(", ")} " \
     "(mean #{format("%.2f", false_per_year.sum.to_f / years)})"
steps.each do |step|
  puts "  the #{format("%+.1f%%", step.figures[step.primary] * 100)} #{step.primary} step of night #{step.night}: found " \
       "#{found[step.night]} of #{years} years, found #{delays[step.night].tally.sort.map { |d, k| "#{d} nights later: #{k}" }.join(", ")}"
end
puts "  ranges (nights a step may be at): #{widths.sort.map { |w, k| "#{w}: #{k}" }.join(", ")}"
puts "  the reverted step marked fixed: #{fixed} of #{years} years"
