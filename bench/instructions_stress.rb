# frozen_string_literal: true

# Instructions per request under stress (issue 31, doc/performance.md
# "Instructions per request under stress"): runs an experiment once per
# seed with N busy loops beside it (`ruby -e 'loop {}'` processes this
# script starts and stops; 0 for a machine left as it is), each run in its
# own results directory, and prints one JSON line per run and
# configuration: the seed, the wall time, the load average before and
# after, the figure's method, median, CV, interval, ratio and verdict
# against the baseline, the GC's instructions per request and cycles, and
# the totals with GC. The busy loops are stopped in an ensure, whatever
# happens to the run.
#
#   bundle exec ruby bench/instructions_stress.rb FILE.yml [--loops 2] [--seeds 1-10]
#     [--results DIR] [--baseline SPEC] [--batches N] [--only ruby=NAME,app=NAME,processes=N,threads=N]
#     [-- extra rackbench run options]
#
# --only runs one case of the file's matrix: its rubies, apps, processes
# and threads narrowed to the values given (the file's exclude still
# applies), written to a copy in the results directory.
#
# e.g. the A/A of bench/instructions_aa_stress.yml on seeds 1 to 10 with
# two busy loops:
#   bundle exec ruby bench/instructions_stress.rb bench/instructions_aa_stress.yml --seeds 1-10 \
#     --baseline 'server=puma-a' --results /tmp/instructions-stress
require "fileutils"
require "json"
require "open3"
require "optparse"
require "rbconfig"
require "yaml"

ROOT = File.expand_path("..", __dir__)
EXE = File.join(ROOT, "exe", "rackbench")

options = { loops: 2, seeds: [1], results: "/tmp/instructions-stress", baseline: nil, batches: nil, only: nil }
extra = []
parser = OptionParser.new do |o|
  o.on("--loops N", Integer) { |v| options[:loops] = v }
  o.on("--seeds A-B") do |v|
    first, last = v.split("-").map { |s| Integer(s, 10) }
    options[:seeds] = (first..(last || first)).to_a
  end
  o.on("--results DIR") { |v| options[:results] = v }
  o.on("--baseline SPEC") { |v| options[:baseline] = v }
  o.on("--batches N", Integer) { |v| options[:batches] = v }
  o.on("--only SPEC") { |v| options[:only] = v.split(",").to_h { |pair| pair.split("=", 2) } }
end
args = ARGV.dup
if (split = args.index("--"))
  extra = args[(split + 1)..]
  args = args[0...split]
end
file = parser.parse(args).first or abort(parser.banner + " FILE.yml")

# The dimension's key in the experiment file, for --only.
ONLY_KEYS = { "ruby" => "rubies", "app" => "apps", "processes" => "processes", "threads" => "threads" }.freeze

# FILE narrowed to one case (--only), written into DIR; FILE itself without.
def narrowed(file, only, dir)
  return File.expand_path(file) unless only

  experiment = YAML.safe_load_file(file)
  only.each do |dim, value|
    key = ONLY_KEYS.fetch(dim) { abort("--only: no dimension #{dim} (#{ONLY_KEYS.keys.join(", ")})") }
    entries = Array(experiment[key]).select do |entry|
      (entry.is_a?(Hash) ? entry["name"] : entry).to_s == value
    end
    abort("--only: #{file} has no #{dim} #{value}") if entries.empty?
    experiment[key] = entries
  end
  # An exclusion naming a value no longer in the matrix excludes nothing (and the file format refuses it).
  experiment["exclude"] = Array(experiment["exclude"]).select do |rule|
    rule.all? do |dim, value|
      key = ONLY_KEYS[dim]
      key.nil? || Array(experiment[key]).any? { |entry| (entry.is_a?(Hash) ? entry["name"] : entry).to_s == value.to_s }
    end
  end
  experiment.delete("exclude") if experiment["exclude"].empty?
  FileUtils.mkdir_p(dir)
  File.join(dir, "experiment.yml").tap { |path| File.write(path, YAML.dump(experiment)) }
end

def load_average
  File.read("/proc/loadavg").split.first(3).map(&:to_f)
end

# One configuration's line: what the instructions section says of it.
def line(seed, config, run)
  doc = config["instructions"]
  against = doc["against_baseline"] || {}
  gc = doc["gc"] || {}
  { "seed" => seed, "config" => config["dims"], **run, "method" => doc["method"],
    "median" => doc.dig("per_request", "median")&.round, "cv_pct" => doc.dig("per_request", "cv")&.*(100)&.round(3),
    "ci95" => doc.dig("per_request", "ci95")&.map(&:round), "per_batch" => doc.dig("per_request", "per_batch")&.map(&:round),
    "ratio" => against["ratio"]&.round(4), "ratio_ci95" => against["ratio_ci95"]&.map { |r| r.round(4) },
    "verdict" => against["verdict"] || (doc["baseline_id"] ? nil : "baseline"),
    "gc_per_request" => gc.dig("per_request", "median")&.round, "gc_cycles_per_1000" => gc["cycles_per_1000"],
    "gc_verdict" => gc.dig("against_baseline", "verdict"), "major_by" => gc["major_by"],
    "total_median" => doc.dig("total_per_request", "median")&.round,
    "total_cv_pct" => doc.dig("total_per_request", "cv")&.*(100)&.round(3),
    "gate_waits_per_request" => doc.dig("gate", "waits_per_request")&.round(2) }
end

options[:seeds].each do |seed|
  results = File.join(options[:results], "seed-#{seed}")
  FileUtils.rm_rf(results)
  loops = []
  before = load_average
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  begin
    loops = Array.new(options[:loops]) { Process.spawn(RbConfig.ruby, "-e", "loop {}", pgroup: true) }
    experiment = narrowed(file, options[:only], "#{results}-experiment")
    argv = [RbConfig.ruby, EXE, "run", experiment, "--seed", seed.to_s, "--results", results, *extra]
    argv.push("--batches", options[:batches].to_s) if options[:batches]
    _out, err, status = Open3.capture3(*argv, chdir: ROOT)
    warn err.lines.last(3).join unless status.success?
  ensure
    loops.each do |pid|
      Process.kill("TERM", pid)
      Process.wait(pid)
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end
  end
  run = { "wall_s" => (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).round,
          "load_before" => before, "load_after" => load_average, "loops" => options[:loops],
          "date" => Time.now.utc.strftime("%Y-%m-%d %H:%M") }
  report = [RbConfig.ruby, EXE, "report", "--results", results, "--json"]
  report.push("--baseline", options[:baseline]) if options[:baseline]
  json, err, status = Open3.capture3(*report, chdir: ROOT)
  unless status.success?
    warn "seed #{seed}: report failed: #{err.lines.last}"
    next
  end
  JSON.parse(json)["configs"].each do |config|
    next unless config["instructions"]

    puts JSON.generate(line(seed, config, run))
    $stdout.flush
  end
end
