# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# `rackbench profile` with a real server, Bundler environment (stackprof
# added to it, the app's Gemfile not naming it) and load engine: the cpu
# app (apps/cpu, a Mandelbrot grid per request) under load in Puma with two
# workers, profiled over the measured window. The Mandelbrot method must be
# on top by self time, every worker's profile merged, and the speedscope
# file well formed. One boot.
describe "rackbench profile (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-profile-it") }
  let(:results) { File.join(dir, "results") }
  after { FileUtils.rm_rf(dir) }

  it "puts the Mandelbrot method on top by self time, every worker's profile merged" do
    file = File.join(dir, "cpu.yml")
    File.write(file, <<~YAML)
      name: profile-cpu
      seed: 1
      batches: 1
      servers: [puma]
      apps: [cpu]
      processes: 2
      threads: 1
      load: { connections: 2, duration: 2s, warmup: 0.5s, timeout: 10s }
    YAML
    speedscope = File.join(dir, "cpu.speedscope.json")
    stdout, stderr, status = rackbench("profile", file, "--results", results, "--json",
                                            "--speedscope", speedscope)
    assert status.success?, "#{stderr}\n#{stdout.lines.last(20).join}"
    doc = JSON.parse(stdout)
    assert_empty doc["configs"], "a profile run measures nothing"
    profile = doc.fetch("profiles").first
    assert_equal %w[stackprof cpu 1000], profile.values_at("tool", "mode", "interval").map(&:to_s)
    top = profile["top_self"].first
    assert_match(/\AMandelbrot[.#]escape_count\z/, top["name"], profile["top_self"].first(5).inspect)
    assert_match(%r{apps/cpu/mandelbrot\.rb\z}, top["file"])
    assert_operator top["self_share"], :>, 0.3
    # Puma's master and its two workers, each its own dump.
    assert_operator profile["processes"], :>=, 3, profile.inspect[0, 500]
    assert_empty profile["missing"]

    store_doc = Rackbench::Store.open(results) { |store| store.trials.map { |r| Rackbench::Profile.of(r) } }
    assert_equal 1, store_doc.size
    assert_equal profile["samples"], store_doc.first["samples"]
    assert File.file?(File.join(results, store_doc.first["file"]))

    scope = JSON.parse(File.read(speedscope))
    assert_equal "https://www.speedscope.app/file-format-schema.json", scope["$schema"]
    assert_equal ["sampled"], scope["profiles"].map { |p| p["type"] }
    # cpu mode's samples weigh the CPU time measured per sample, which is
    # never less than the interval asked (ITIMER_PROF counts CPU time).
    assert_operator profile["sample_us"], :>=, 1000 * 0.9
    assert_in_delta profile["samples"] * profile["sample_us"], scope["profiles"].first["weights"].sum, 1.0
    report = File.read(File.join(results, "report.html"))
    assert_includes report, %(id="chart-profile-1")
  end

  it "runs a profiled trial beside the measured one in `rackbench run`, counting only the measured one" do
    file = File.join(dir, "run.yml")
    File.write(file, <<~YAML)
      name: run-profiled
      seed: 1
      batches: 1
      servers: [puma]
      apps: [cpu]
      processes: 1
      threads: 1
      load: { connections: 1, duration: 1s, warmup: 0.3s, timeout: 10s }
      profile: { tool: stackprof, mode: object, interval_objects: 10 }
    YAML
    stdout, stderr, status = rackbench("run", file, "--results", results, "--wide")
    assert status.success?, "#{stderr}\n#{stdout}"
    assert_match(/Profile of .*app=cpu.*: stackprof object, every 10 allocation\(s\)/, stdout)
    assert_match(/Top frames by self:\n.*\n +\d+\.\d% +\d+\.\d%  /, stdout)
    records = Rackbench::Store.open(results, &:trials)
    profiled, plain = records.partition { |r| Rackbench::Profile.profiled?(r) }
    assert_equal [1, 1], [profiled.size, plain.size]
    assert(records.all?(&:ok?))
    doc = Rackbench::Store.open(results) { |store| Rackbench::Report.new(store).to_h }
    assert_equal 1, doc["configs"].first["batches"], "the profiled trial counts in no figure"
    assert_equal [plain.first.key], doc["trials"].map { |t| t["key"] }
    assert_equal "object", doc["profiles"].first["mode"]
  end
end
