# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"
require_relative "../fixtures/fakes/tune"
require "rackbench/tune"

# rackbench tune over the fakes (Fakes::TuneServer): a server whose
# threads help up to 4 per process, whose workers grow 1 MB per thread,
# measured by pilot, filtered by the budget, scored within p99 ≤ 50 ms;
# every step an ordinary stored experiment, replayed on resume.
describe Rackbench::Tune::Search do
  SEARCH_MB = 1_000_000

  let(:dir) { Dir.mktmpdir("rackbench-tune") }
  let(:out) { StringIO.new }
  let(:err) { StringIO.new }
  let(:install) { Fakes.install }
  let(:server) { Fakes::TuneServer.new(extra_peak_mb: { [2, 8] => 20 }) }
  let(:tune_yaml) { "tune: { memory: 160MB, p99: 50ms, processes: [1, 2, 3], threads: [1, 4, 8, 16] }" }

  def experiment(tune = tune_yaml, servers: "[puma]", extra: "")
    Rackbench::Experiment.parse(<<~YAML, source: "tune.yml", base_dir: dir)
      name: tune-test
      seed: 3
      rubies: [ruby]
      servers: #{servers}
      apps: [io-wait]
      load: { duration: 0.1s, warmup: 0s, timeout: 2s }
      #{tune}
      #{extra}
    YAML
  end

  def steps(fake = server)
    Rackbench::Runner::Steps.new(
      results_dir: dir, out: out, err: err, installs: [install], machine: { "machine" => "fake" },
      runner_options: { layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                        stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" }, collaborators: fake.collaborators,
                        watchdog: Fakes::Watchdog.new }
    )
  end

  def tune(exp = experiment, fake = server)
    search = Rackbench::Tune::Search.new(exp, steps: steps(fake))
    Rackbench::Tune::Analysis.new(search.run, settings: search.settings, experiment: exp).to_h
  end

  def candidate(doc, processes, threads, server: "puma")
    doc["servers"].find { |s| s["server"] == server }["candidates"].find { |c| c["processes"] == processes && c["threads"] == threads }
  end

  after { FileUtils.rm_rf(dir) }

  it "measures master and workers in a pilot, then runs only the candidates whose predicted PSS fits" do
    doc = tune
    puma = doc["servers"].first
    assert_equal 60 * SEARCH_MB, puma["model"]["master_pss_bytes"]
    assert_equal [[1, 41 * SEARCH_MB], [16, 56 * SEARCH_MB]], puma["model"]["points"].map { |p| [p["threads"], p["worker_pss_bytes"]] }
    # master + P × worker(T), worker linear between the pilot's 1 and 16 threads
    assert_equal 60 * SEARCH_MB + 2 * 44 * SEARCH_MB, candidate(doc, 2, 4)["predicted_pss_bytes"]
    assert_equal [[2, 16, 172 * SEARCH_MB], [3, 1, 183 * SEARCH_MB], [3, 4, 192 * SEARCH_MB], [3, 8, 204 * SEARCH_MB], [3, 16, 228 * SEARCH_MB]],
                 puma["excluded"].map { |c| c.values_at("processes", "threads", "predicted_pss_bytes") }
    ran = Rackbench::Store.open(dir, &:experiments).map { |e| e[:name] }
    assert_equal %w[tune-test.tune.puma.pilot.p2t1 tune-test.tune.puma.pilot.p2t16], ran.first(2)
    assert_equal 2 + 7, ran.size, "2 pilots and the 7 candidates that fit"
    refute_includes ran, "tune-test.tune.puma.p3t1"
    # each step ran what it was named: processes, threads, closed loop at 2 × P × T connections
    assert_equal [[2, 1, 4], [2, 16, 64], *[[1, 1, 2], [1, 4, 8], [1, 8, 16], [1, 16, 32], [2, 1, 4], [2, 4, 16], [2, 8, 32]]],
                 server.engine.settings.zip(server.launcher.launches).map { |s, l| [l[:trial].config.processes, l[:trial].config.threads, s.connections] }
    assert(server.engine.settings.all? { |s| s.rate.nil? }, "closed loop")
  end

  it "scores throughput within the latency target, flags a measured PSS over the budget, and picks the best" do
    doc = tune
    assert_equal 400.0, candidate(doc, 1, 8)["score"]["median"], "40 ms p99 holds 50 ms"
    sixteen = candidate(doc, 1, 16)
    assert_equal [400.0, 0.0, false], [sixteen["rps_median"], sixteen["score"]["median"], sixteen["score"]["qualified"]]
    assert_in_delta 80_000, sixteen["score"]["per_batch"].first["latency_us"], 1
    over = candidate(doc, 2, 8)
    assert_equal [true, 176 * SEARCH_MB], over.values_at("over_budget", "measured_pss_bytes")
    refute candidate(doc, 2, 4)["over_budget"]
    best = doc["best"]
    assert_equal ["puma", 2, 4, 800.0], best.values_at("server", "processes", "threads") + [best["score"]["median"]]
    assert_nil best["score"]["ci95"], "one batch: no interval"
  end

  it "finds the knee: the fewest threads within the tolerance of the best at each process count" do
    knees = tune["servers"].first["knees"]
    assert_equal [[1, 4, 4], [2, 4, 4]], knees.map { |k| k.values_at("processes", "knee_threads", "best_threads") }
    one = knees.first
    assert_equal "tolerance", one["rule"]
    assert_in_delta 380.0, one["threshold"]
    assert_equal [3.0, 0.0, -1.0], one["gains"].map { |g| g["gain"] }
    assert_match(/1 process: 4 threads score best \(400 req\/s\); more threads \(8, 16\) add nothing/, one["text"])
    assert_match(/; score per step: 1→4 \+300%, 4→8 \+0%\z/, one["text"])
    two = knees.last
    assert_equal [16], two["left_out_threads"]
    assert_match(/more threads \(8\) add nothing the batches can tell apart; 16 threads did not fit the budget;/, two["text"])
  end

  it "uses the best's interval from 5 batches, and gives none below" do
    exp = experiment(tune_yaml.sub("p99: 50ms", "p99: 50ms, batches: 5"))
    noisy = Fakes::TuneServer.new(noise: 0.01)
    doc = tune(exp, noisy)
    best = doc["best"]
    low, high = best["score"]["ci95"]
    assert_equal 5, best["score"]["per_batch"].size
    assert_operator low, :<, high
    knee = doc["servers"].first["knees"].find { |k| k["processes"] == best["processes"] }
    assert_equal ["interval", low], knee.values_at("rule", "threshold"), "a 1% noise interval is stricter than 5%"
    assert_match(/within the 95% interval of the best|score best/, knee["text"])

    three = tune(experiment(tune_yaml.sub("p99: 50ms", "p99: 50ms, batches: 3")), Fakes::TuneServer.new(noise: 0.01))
    assert_nil three["best"]["score"]["ci95"], "3 batches: no interval (the report's rule)"
  end

  it "resumes from the stored steps: an interrupted tune runs only what it had not stored" do
    interrupted = Fakes::TuneServer.new(interrupt_at: 5)
    assert_raises(Rackbench::Interrupted) { tune(experiment, interrupted) }
    assert_equal 5, interrupted.engine.calls
    rest = Fakes::TuneServer.new
    first = tune(experiment, rest)
    assert_equal 9 - 4, rest.engine.calls, "the 4 stored steps ran no more; the interrupted one ran again"
    again = Fakes::TuneServer.new
    second = tune(experiment, again)
    assert_equal 0, again.engine.calls
    assert_equal first, second
  end

  it "compares the best of each server within the same budget, and skips what a server cannot run" do
    exp = experiment(servers: "[puma, unicorn]")
    doc = tune(exp)
    unicorn = doc["servers"].find { |s| s["server"] == "unicorn" }
    assert_equal 60 * SEARCH_MB, unicorn["model"]["master_pss_bytes"]
    assert_equal [1], unicorn["model"]["points"].map { |p| p["threads"] }, "unicorn's pilot: 1 thread, all it runs"
    assert_equal "unsupported", candidate(doc, 1, 4, server: "unicorn")["status"]
    assert_equal [2, 1, 200.0], doc["servers"].find { |s| s["server"] == "unicorn" }["best"].values_at("processes", "threads").push(
      doc["servers"].find { |s| s["server"] == "unicorn" }["best"]["score"]["median"]
    )
    comparison = doc["comparisons"].first
    assert_match(/\Apuma 2×4 \(800 req\/s, 148\.0 MB\) vs unicorn 2×1 \(200 req\/s, 142\.0 MB\) within 160\.0 MB: 4\.00× the throughput\z/,
                 comparison["text"])
  end

  it "stops after a pilot without per-process PSS, naming the step to look at" do
    silent = Fakes::TuneServer.new(agent: false)
    error = assert_raises(Rackbench::Error) { tune(experiment, silent) }
    assert_match(/the pilot of puma gave no per-process PSS.*rackbench report --name tune-test\.tune\.puma\.pilot\.p2t1/, error.message)
    assert_equal 2, silent.engine.calls, "no candidate ran"
  end

  it "refuses what it cannot search, naming the file" do
    error = assert_raises(Rackbench::ConfigError) do
      Rackbench::Tune::Search.new(experiment(extra: "inside: off"), steps: steps)
    end
    assert_match(/tune\.yml: .*inside: off/, error.message)
    error = assert_raises(Rackbench::ConfigError) { Rackbench::Tune::Search.new(experiment(""), steps: steps) }
    assert_match(/no tune: section/, error.message)
    exp = Rackbench::Experiment.parse(experiment.source_text.sub("timeout: 2s", "timeout: 2s, connections: [1, 2]"),
                                      source: "tune.yml", base_dir: dir)
    assert_raises(Rackbench::ConfigError) { Rackbench::Tune::Search.new(exp, steps: steps) }
  end
end
