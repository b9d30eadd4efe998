# frozen_string_literal: true

# Issue 36's proof with nokogiri (doc/performance.md, "Gem platforms"): the
# app test/fixtures/apps/native-xml, whose lock Ruby 3.1's Bundler 2.3 wrote
# with nokogiri 1.18.10's source gem and mini_portile2, on Ruby 3.1 (the
# system's), 3.3.8 and 3.4.5 (the test rubies), three experiments in turn:
#
# 1. shared: one gem set; what each ruby installed, the notes, no g flag;
# 2. per_ruby (3.1 and 3.3.8): each from the app's lock, nokogiri 1.18.10 kept;
# 3. force_ruby_platform: nokogiri compiled from source on every ruby.
#
# The Bundler environments and gem directories are a cache of their own
# (RACKBENCH_CACHE, default tmp/gem-platforms-cache), so every run starts
# from empty gem directories: Bundler prefers a gem already installed when
# it re-resolves, and the shared cache may hold nokogiri's source gem for
# 3.3 already (Redmine's tests compile it). Compiling nokogiri takes minutes
# per ruby.
#
#   bundle exec rake test:rubies                         # the rubies, once
#   bundle exec ruby bench/gem_platforms_nokogiri.rb     # prints a JSON summary
require "fileutils"
require "json"
require "open3"
$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
$LOAD_PATH.unshift File.expand_path("../test", __dir__)
require "support/test_rubies"

ROOT = File.expand_path("..", __dir__)
EXE = File.join(ROOT, "exe", "rackbench")
APP = File.join(ROOT, "test", "fixtures", "apps", "native-xml")
CACHE = ENV.fetch("RACKBENCH_CACHE", File.join(ROOT, "tmp", "gem-platforms-cache"))
WORK = File.join(ROOT, "tmp", "gem-platforms")

r33 = TestRubies.ruby("3.3")
r34 = TestRubies.ruby("3.4")
experiments = {
  "shared" => { rubies: ["ruby", "{ name: r33, ruby: #{r33} }", "{ name: r34, ruby: #{r34} }"], extra: "" },
  "per_ruby" => { rubies: ["ruby", "{ name: r33, ruby: #{r33} }"], extra: "gems: per_ruby" },
  "forced" => { rubies: ["ruby", "{ name: r33, ruby: #{r33} }", "{ name: r34, ruby: #{r34} }"],
                extra: "gems: { force_ruby_platform: true }" }
}

FileUtils.rm_rf(WORK)
FileUtils.mkdir_p(WORK)
summary = experiments.map do |name, experiment|
  file = File.join(WORK, "#{name}.yml")
  File.write(file, <<~YAML)
    name: nokogiri-#{name}
    rubies: [#{experiment[:rubies].join(", ")}]
    servers: [puma]
    apps: [{ name: native-xml, path: #{APP}, expect_body: "native nokogiri 1.18.10" }]
    processes: 2
    load: { connections: 2, count: 200, warmup_count: 20, timeout: 20s }
    #{experiment[:extra]}
  YAML
  results = File.join(WORK, name)
  load_before = File.read("/proc/loadavg").split.first(3)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  out, err, status = Open3.capture3({ "RACKBENCH_CACHE" => CACHE }, RbConfig.ruby, EXE, "run", file,
                                    "--results", results, stdin_data: "")
  wall_s = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  File.write(File.join(WORK, "#{name}.out"), out + err)
  abort "#{name} failed: #{err.lines.grep(/\Arackbench: /).last}" unless status.success?
  trials = Rackbench::Store.open(results, &:trials)
  { "experiment" => name, "wall_s" => wall_s.round, "load_before" => load_before,
    "load_after" => File.read("/proc/loadavg").split.first(3),
    "installs" => out.lines.grep(/gems ready in/).map(&:strip),
    "said" => out.lines.grep(/^  native-xml: /).map(&:strip),
    "notes" => out[/^Gems built or bundled otherwise.*?(?=^\S)/m].to_s.lines.drop(1).map(&:strip),
    "trials" => trials.map do |t|
      { "ruby" => t.ruby, "status" => t.status, "processes" => t.identity["processes"].size,
        "nokogiri" => t.identity.dig("gems", "nokogiri"), "built" => t.identity.dig("gem_platforms", "nokogiri"),
        "mini_portile2" => t.identity.dig("gems", "mini_portile2"),
        "force_ruby_platform" => t.identity["force_ruby_platform"], "mismatches" => t.identity["mismatches"] }
    end }
end
puts JSON.pretty_generate(summary)
