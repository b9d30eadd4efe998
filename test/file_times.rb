# frozen_string_literal: true

require "json"
require "fileutils"

# What each test file took in the last measured run, in seconds, per tier
# ("unit", "integration"), and the lanes' order and groups made from it.
#
# Why measured times: two lanes finish together only when the longest
# files start first (longest-processing-time-first list scheduling: each
# free lane takes the longest file left), and a hand-kept list of "the
# slowest files" goes stale with every test added. The times of the last
# run on this checkout (tmp/test-times.json, written by every run) win
# for each tier it ran; a fresh clone has none and uses the committed ones
# (test/file_times.json, from a measured whole run: `rake test:times`
# copies the last run's over them). A file that neither knows is given the median of the known ones,
# so a new test neither starts first nor last by accident.
class FileTimes
  COMMITTED = File.expand_path("file_times.json", __dir__)
  LAST_RUN = File.expand_path("../tmp/test-times.json", __dir__)

  # The committed times, each tier replaced by the last run's here when
  # that run measured it.
  def self.load(committed: COMMITTED, last_run: LAST_RUN)
    new([committed, last_run].select { |path| File.exist?(path) }.map { |path| JSON.parse(File.read(path)) }
                             .reduce({}, :merge))
  end

  # :seconds :: { tier => { file => seconds } }, files relative to the checkout
  def initialize(seconds)
    @seconds = seconds
  end

  # The measured seconds of +file+ in +tier+, or nil.
  def [](tier, file)
    @seconds.dig(tier, relative(file))
  end

  # The files, longest first (by name among equals).
  def longest_first(tier, files)
    files.sort_by { |file| [-estimate(tier, file), file] }
  end

  # The files split into +count+ groups of about equal total time: each
  # file, longest first, goes to the group with the least time so far.
  # Returns Arrays of files (the longest group first), none empty.
  def groups(tier, files, count)
    totals = Array.new(count, 0.0)
    groups = Array.new(count) { [] }
    longest_first(tier, files).each do |file|
      lane = totals.index(totals.min)
      groups[lane] << file
      totals[lane] += estimate(tier, file)
    end
    groups.reject(&:empty?)
  end

  # Records +by_file+ ({ file => seconds }) as +tier+'s times, keeping the
  # other tiers', and writes them to +path+ (default: tmp/test-times.json).
  def record(tier, by_file, path: LAST_RUN)
    @seconds = @seconds.merge(tier => by_file.to_h { |file, s| [relative(file), s.round(2)] }.sort.to_h)
    FileUtils.mkdir_p(File.dirname(path))
    File.write(path, "#{JSON.pretty_generate(@seconds)}\n")
  end

  private

  def estimate(tier, file)
    self[tier, file] || median(tier)
  end

  def median(tier)
    known = (@seconds[tier] || {}).values.sort
    known.empty? ? 1.0 : known[known.size / 2]
  end

  def relative(file)
    root = File.expand_path("..", __dir__)
    path = File.expand_path(file, root)
    path.start_with?("#{root}/") ? path.delete_prefix("#{root}/") : file
  end
end
