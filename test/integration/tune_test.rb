# frozen_string_literal: true

require "test_helper"
require "stringio"
require "json"
require "rackbench/cli/tune_command"

# rackbench tune on io-wait under Puma (each request sleeps 10 ms, so
# threads help), the budget chosen from the measured pilot so that at most
# 2 processes fit: it picks threads > 1 and says where more threads stop
# helping. One tune, shared by the assertions: a first run with a budget
# nothing fits measures the pilot; the second, with the budget, resumes
# from it (the pilot runs no more) and runs the candidates. The latency
# target is loose (p99 1 s): what is checked is memory and threads, and a
# shared CI machine can stretch a 10 ms sleep's p99 past 100 ms.
describe "rackbench tune (integration)" do
  before { require_engine! }

  # The current ruby only, probed as discover would: Rubies.discover
  # probes every installed ruby (a JRuby takes seconds) for a tune that
  # names one.
  def self.install
    candidate = Rackbench::Rubies::Locator::Candidate.new(path: File.realpath(RbConfig.ruby), source: :path,
                                                          command: [File.realpath(RbConfig.ruby)])
    Rackbench::Rubies::Prober.new(env: ENV, timeout_s: 60).describe(candidate).with(name: "ruby")
  end

  def self.tuned
    @tuned ||= begin
      install = self.install
      dir = Dir.mktmpdir("rackbench-tune")
      file = File.join(dir, "tune.yml")
      results = File.join(dir, "results")
      write = lambda do |memory|
        File.write(file, <<~YAML)
          name: tune-io-wait
          rubies: [ruby]
          servers: [puma]
          apps: [io-wait]
          load: { duration: 1s, warmup: 0.5s, timeout: 2s }
          tune: { memory: #{memory}, p99: 1s, processes: [1, 2, 3], threads: [1, 4] }
        YAML
      end
      run = lambda do |*args|
        out = StringIO.new
        err = StringIO.new
        code = Rackbench::CLI::TuneCommand.new(out: out, err: err, steps_options: { installs: [install] })
                                          .run([file, "--results", results, "--json", *args])
        [code, out.string.empty? ? nil : JSON.parse(out.string), err.string]
      end
      write.call(1) # bytes: no candidate fits, only the pilot runs
      pilot_code, pilot, pilot_err = run.call
      model = pilot["servers"].first["model"]
      workers = model["points"].map { |p| p["worker_pss_bytes"] }
      budget = (model["master_pss_bytes"] + 2.5 * workers.min).round
      write.call(budget)
      code, doc, err = run.call("--resume")
      experiments = Rackbench::Store.open(results, &:experiments)
      trials = Rackbench::Store.open(results) { |store| store.trials }
      { dir: dir, pilot_code: pilot_code, pilot: pilot, pilot_err: pilot_err, budget: budget, code: code, doc: doc,
        err: err, experiments: experiments, trials: trials, html: File.join(results, "tune.html") }
    end
  end

  Minitest.after_run { FileUtils.rm_rf(tuned[:dir]) if @tuned }

  let(:tuned) { self.class.tuned }
  let(:doc) { tuned[:doc] }
  let(:puma) { doc["servers"].first }

  it "measures the master and each worker's PSS in the pilot, and runs nothing when nothing fits" do
    assert_equal Rackbench::CLI::EXIT_FAILURE, tuned[:pilot_code], tuned[:pilot_err]
    model = tuned[:pilot]["servers"].first["model"]
    assert_operator model["master_pss_bytes"], :>, 5_000_000, "a master that loaded the app"
    assert_equal [1, 4], model["points"].map { |p| p["threads"] }
    assert(model["points"].all? { |p| p["workers"] == 2 && p["worker_pss_bytes"] > 5_000_000 })
    assert(tuned[:pilot]["servers"].first["candidates"].all? { |c| c["status"] == "excluded" })
  end

  it "keeps at most 2 processes within a budget of master + 2.5 workers, and picks threads > 1" do
    assert_equal Rackbench::CLI::EXIT_OK, tuned[:code], tuned[:err]
    ran = puma["candidates"].select { |c| c["status"] == "scored" }
    refute_empty ran
    assert(ran.all? { |c| c["processes"] <= 2 }, ran.map { |c| c.values_at("processes", "threads") }.inspect)
    assert_equal [3], puma["excluded"].map { |c| c["processes"] }.uniq
    assert(ran.all? { |c| c["measured_pss_bytes"].is_a?(Integer) }, "every candidate's memory measured, not only predicted")
    best = doc["best"]
    assert_operator best["threads"], :>, 1, Rackbench::Tune::Terminal.new(doc).render
    assert_operator best["processes"], :<=, 2
    one_thread = ran.find { |c| c["processes"] == best["processes"] && c["threads"] == 1 }
    assert_operator best["score"]["median"], :>, 2 * one_thread["score"]["median"], "10 ms waits: 4 threads serve more than 1"
  end

  it "explains the knee and says what it ran, in the terminal and tune.html" do
    knee = puma["knees"].find { |k| k["processes"] == doc["best"]["processes"] }
    assert_equal 4, knee["knee_threads"]
    assert_operator knee["gains"].first["gain"], :>, 1.0, "1 -> 4 threads more than doubles"
    text = Rackbench::Tune::Terminal.new(doc).render
    assert_match(/^Where more threads stop helping \(puma\):$/, text)
    assert_match(/^Best: puma [12] processes? × 4 threads: /, text)
    assert_includes File.read(tuned[:html]), "spec-score"
  end

  it "resumed: the pilot's trials ran once, each step is a stored experiment" do
    names = tuned[:experiments].map { |e| e[:name] }
    assert_equal 2, names.count { |n| n.include?(".pilot.") }
    assert_equal names.size, tuned[:trials].size, "one batch per step, none run twice"
    assert(tuned[:trials].all?(&:ok?), tuned[:trials].map(&:reason).compact.inspect)
  end
end
