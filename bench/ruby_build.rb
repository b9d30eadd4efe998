# frozen_string_literal: true

# What building rubies costs (doc/performance.md, "Rubies built from source"):
# 1. reusing a cached build: `rackbench rubies build` of the test rubies'
#    3.4.5 tarball, three times (the CLI's start, the tarball's digest, the
#    probe of the built ruby);
# 2. a rebuild that differs from a cached one only in a variable the
#    compiler never sees (so every object is the same): what ccache saves,
#    with its hit rate over the rebuild;
# 3. each cached build's own record: its steps' durations.
#
#   bundle exec rake test:rubies            # the tarballs and builds, once
#   bundle exec ruby bench/ruby_build.rb    # prints a JSON summary
require "json"
require "open3"
$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
$LOAD_PATH.unshift File.expand_path("../test", __dir__)
require "support/test_rubies"

EXE = File.expand_path("../exe/rackbench", __dir__)
TARBALL = TestRubies.tarball("3.4")
CCACHE_DIR = File.join(Rackbench::CacheRoot.path, "rubies", "ccache")

def timed
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  out, err, status = yield
  abort "failed: #{err}#{out}" unless status.success?
  Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
end

def ccache_stats
  out, = Open3.capture2({ "CCACHE_DIR" => CCACHE_DIR }, "ccache", "--print-stats")
  out.lines.to_h { |line| k, v = line.split("\t"); [k, v.to_i] }
end

reuse_s = 3.times.map do
  timed { Open3.capture3(RbConfig.ruby, EXE, "rubies", "build", TARBALL, "--name", "3.4") }.round(2)
end

before = ccache_stats
nonce = Time.now.to_i.to_s
rebuild_s = timed do
  Open3.capture3(RbConfig.ruby, EXE, "rubies", "build", TARBALL, "--name", "3.4-nonce", "--env", "RACKBENCH_BENCH_NONCE=#{nonce}")
end
after = ccache_stats
hits = %w[direct_cache_hit preprocessed_cache_hit].sum { |k| after.fetch(k, 0) - before.fetch(k, 0) }
misses = after.fetch("cache_miss", 0) - before.fetch("cache_miss", 0)

records = Rackbench::Rubies::Build::Cache.new.keys.map { |key| Rackbench::Rubies::Build::Cache.new.record(key) }
puts JSON.pretty_generate(
  "reuse_s" => reuse_s,
  "rebuild_same_objects_s" => rebuild_s.round(1), "ccache_hits" => hits, "ccache_misses" => misses,
  "load_average" => File.read("/proc/loadavg").split.first(3).map(&:to_f),
  "builds" => records.map { |r| r.slice("name", "version", "key", "duration_s", "steps_s", "ccache", "built_at") }
)
