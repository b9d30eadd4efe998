# frozen_string_literal: true

# Where the unit tier's CPU goes: runs the tier's groups (the same
# groups `rake test:unit` makes from the measured file times), one after
# the other so that they do not share the CPUs, each in a ruby of its own
# with the CPU time reporter on (test/support/cpu_time_reporter.rb), then
# prints each group's CPU seconds, the slowest files and the slowest tests
# by CPU. Why CPU seconds: this machine is shared and its wall clock
# stretches with everyone's load; a test's CPU time hardly does. Run by
# hand from the checkout:
#
#   bundle exec ruby bench/unit_cpu.rb [--tests 20] [--files 10] [--lanes 2] [FILE...]
#
# --stackprof DIR also writes a stackprof dump of each group (cpu mode)
# into DIR (`stackprof DIR/group-1.dump --text`), leaving out the files
# that run StackProf themselves (the profile tests and those of
# test/support/real_profiles.rb: their StackProf.run ends the group's
# profile). Figures: doc/performance.md.
require "json"
require "optparse"
require "rbconfig"
require "tmpdir"
require_relative "../test/file_times"
require_relative "../test/unit_gc_env"

ROOT = File.expand_path("..", __dir__)
options = { tests: 20, files: 10, lanes: 2, stackprof: nil }
OptionParser.new do |p|
  p.on("--tests N", Integer) { |v| options[:tests] = v }
  p.on("--files N", Integer) { |v| options[:files] = v }
  p.on("--lanes N", Integer) { |v| options[:lanes] = v }
  p.on("--stackprof DIR") { |v| options[:stackprof] = File.expand_path(v) }
end.parse!

Dir.chdir(ROOT)
files = ARGV.empty? ? Dir["test/unit/**/*_test.rb"].sort : ARGV
if options[:stackprof]
  files, profiling = files.partition { |file| !File.read(file).match?(/StackProf|real_profiles/) }
  puts "left out (they start StackProf): #{profiling.join(" ")}" unless profiling.empty?
end
groups = FileTimes.load.groups("unit", files, options[:lanes])
loadavg = -> { File.read("/proc/loadavg").split.first }
puts "load average #{loadavg.call} at the start"

rows = Dir.mktmpdir("rackbench-unit-cpu") do |dir|
  groups.each_with_index.flat_map do |group, index|
    path = File.join(dir, "group-#{index + 1}.jsonl")
    env = { "RACKBENCH_TEST_CPU" => path, "RACKBENCH_TEST_TIER" => "unit" }.merge(UNIT_GC_ENV)
    profile = []
    if options[:stackprof]
      Dir.mkdir(options[:stackprof]) unless Dir.exist?(options[:stackprof])
      dump = File.join(options[:stackprof], "group-#{index + 1}.dump")
      starter = File.join(dir, "stackprof-#{index + 1}.rb")
      File.write(starter, "require 'stackprof'\nStackProf.start(mode: :cpu, interval: 1000, raw: true)\n" \
                          "at_exit { StackProf.stop; StackProf.results(#{dump.dump}) }\n")
      profile = ["-r#{starter}"]
    end
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    log = File.join(dir, "group-#{index + 1}.log")
    passed = system(env, RbConfig.ruby, "-w", "-Ilib", "-Itest", *profile, "test/load_files.rb", *group,
                    out: log, err: %i[child out])
    wall_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    group_rows = File.readlines(path).map { |line| JSON.parse(line) }
    total_s = group_rows.find { |row| row["test"].nil? }["cpu_s"]
    puts format("group %d: %d files, %d tests, %.1f s of CPU (%.1f s in tests), %.1f s wall, %s (load average %s)",
                index + 1, group.size, group_rows.size - 1, total_s,
                group_rows.sum { |row| row["test"] ? row["cpu_s"] : 0 }, wall_s, passed ? "passed" : "FAILED",
                loadavg.call)
    # A failed group's summary, so that its figures are not taken for a green run's.
    puts File.readlines(log).grep_v(/warning:/).last(40).join unless passed
    group_rows.select { |row| row["test"] }
  end
end

puts "", "slowest #{options[:files]} files by CPU (s, tests):"
rows.group_by { |row| row["file"] }.map { |file, tests| [file, tests.sum { |row| row["cpu_s"] }, tests.size] }
    .max_by(options[:files]) { |_, cpu_s, _| cpu_s }
    .each { |file, cpu_s, count| puts format("%7.2f  %4d  %s", cpu_s, count, file.delete_prefix("#{ROOT}/")) }
puts "", "slowest #{options[:tests]} tests by CPU (s CPU, s wall):"
rows.max_by(options[:tests]) { |row| row["cpu_s"] }.each do |row|
  puts format("%7.3f %7.3f  %s (%s)", row["cpu_s"], row["wall_s"], row["test"],
              File.basename(row["file"]))
end
puts "", format("all tests: %.1f s of CPU", rows.sum { |row| row["cpu_s"] })
