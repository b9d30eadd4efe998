# frozen_string_literal: true

require "test_helper"
require "stringio"
require "json"
require_relative "../fixtures/fakes"
require_relative "../fixtures/fakes/tune"
require "rackbench/tune"
require "rackbench/cli/tune_command"

# What rackbench tune shows: the terminal answer, tune.html, --json, and the
# command itself over steps stored by the fakes (a stored step runs
# nothing, so the command replays them without a server).
describe "rackbench tune views" do
  let(:dir) { Dir.mktmpdir("rackbench-tune-views") }
  let(:file) { File.join(dir, "tune.yml") }
  let(:results) { File.join(dir, "results") }
  let(:fake) { Fakes::TuneServer.new(extra_peak_mb: { [2, 8] => 20 }) }
  let(:install) { Fakes.install }

  before do
    File.write(file, <<~YAML)
      name: views
      rubies: [ruby]
      servers: [puma]
      apps: [io-wait]
      load: { duration: 0.1s, warmup: 0s, timeout: 2s }
      tune: { memory: 160MB, p99: 50ms, processes: [1, 2, 3], threads: [1, 4, 8, 16] }
    YAML
  end
  after { FileUtils.rm_rf(dir) }

  # What Runner::Steps takes to run over the fakes.
  def steps_options
    { installs: [install], machine: { "machine" => "fake" },
      runner_options: { layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil), stop_grace_s: 0,
                        parent_env: { "PATH" => "/usr/bin:/bin" }, collaborators: fake.collaborators,
                        watchdog: Fakes::Watchdog.new } }
  end

  # Runs the tune over the fakes into +results+; returns its document.
  def tune_with_fakes
    steps = Rackbench::Runner::Steps.new(results_dir: results, out: StringIO.new, err: StringIO.new, **steps_options)
    experiment = Rackbench::Experiment.load(file)
    search = Rackbench::Tune::Search.new(experiment, steps: steps)
    Rackbench::Tune::Analysis.new(search.run, settings: search.settings, experiment: experiment).to_h
  end

  def cli(*args)
    out = StringIO.new
    err = StringIO.new
    code = Rackbench::CLI::TuneCommand.new(out: out, err: err, steps_options: steps_options).run(args)
    [code, out.string, err.string]
  end

  it "tells the best, the knee, what the budget left out and what went over it, in the terminal" do
    text = Rackbench::Tune::Terminal.new(tune_with_fakes).render
    assert_match(/^Tune views: within 160\.0 MB PSS \(whole server tree\), p99 ≤ 50\.00ms$/, text)
    assert_match(/master 60\.0 MB, a worker at 1 thread: 41\.0 MB, 16 threads: 56\.0 MB/, text)
    assert_match(/^Left out, predicted over the budget: 2×16 \(172\.0 MB\), 3×1 \(183\.0 MB\)/, text)
    assert_match(/^Measured over the budget \(not eligible\): 2×8 \(176\.0 MB\)$/, text)
    assert_match(/^  2 processes: 4 threads score best \(800 req\/s\)/, text)
    assert_match(/^Best: puma 2 processes × 4 threads: 800 req\/s \(1 batch: an interval needs 5\), measured PSS 148\.0 MB of 160\.0 MB$/, text)
    row = text.lines.find { |l| l.include?("1 × 16") }
    assert_match(/80\.00ms .*misses the target/, row)
  end

  it "draws the score against threads with the knees, and memory against the budget line, in tune.html" do
    html = Rackbench::Tune::HtmlPage.new(tune_with_fakes).render
    assert_includes html, "default-src 'none'"
    specs = html.scan(%r{<script type="application/json" id="spec-([a-z]+)">(.*?)</script>}m).to_h { |id, json| [id, JSON.parse(json)] }
    assert_equal %w[score memory], specs.keys
    rows = specs["score"]["data"]["values"]
    assert_equal 7, rows.size
    assert_equal [["puma × 1 process", 4], ["puma × 2 processes", 4]], rows.select { |r| r["knee"] }.map { |r| [r["line"], r["threads"]] }
    budget = specs["memory"]["layer"].last["data"]["values"]
    assert_equal [{ "mb" => 160.0 }], budget
    assert_includes html, "<li>Best: puma 2 processes × 4 threads"
  end

  it "replays stored steps from the command line only with --resume, and prints the answer and writes tune.html" do
    first = tune_with_fakes
    error = assert_raises(Rackbench::UsageError) { cli(file, "--results", results) }
    assert_match(/already holds steps of this tune: continue it with --resume/, error.message)

    code, out, err = cli(file, "--results", results, "--resume", "--json")
    assert_equal Rackbench::CLI::EXIT_OK, code, err
    doc = JSON.parse(out)
    assert_equal %w[rackbench-tune 1], [doc["format"], doc["format_version"].to_s]
    assert_equal first["best"], doc["best"]
    assert File.file?(File.join(results, "tune.html"))
    assert_match(/Tune page: .*tune\.html/, err)
  end

  it "plans without running: the pilots, then the candidates as far as the stored pilot decides them" do
    code, out, = cli(file, "--results", results, "--dry-run")
    assert_equal Rackbench::CLI::EXIT_OK, code
    assert_match(/^Pilot views\.tune\.puma\.pilot\.p2t1:/, out)
    assert_match(/^puma: candidates 1×1, 1×4, .*3×16; which fit the budget follows from the pilot/, out)
    tune_with_fakes
    _, out, = cli(file, "--results", results, "--dry-run")
    assert_match(/^puma 3×1: predicted 183\.0 MB, left out/, out)
    assert_match(/^puma 2×4: predicted 148\.0 MB, runs \(stored\), 16 connections/, out)
  end

  it "documents every key it writes in doc/output.md" do
    doc = tune_with_fakes
    text = File.read(File.expand_path("../../doc/output.md", __dir__))[/^## The tune document.*?(?=^## )/m]
    server = doc["servers"].first
    scored = server["candidates"].find { |c| c["status"] == "scored" }
    objects = [doc, doc["budget"], server, scored, scored["score"], scored["score"]["per_batch"].first, server["model"],
               server["model"]["points"].first, server["knees"].first, server["knees"].first["gains"].first,
               doc["comparisons"].first]
    objects.flat_map(&:keys).uniq.each do |key|
      assert text.include?("`#{key}`") || text.include?("`servers.#{key}`"), "#{key} is documented"
    end
  end

  it "refuses a file without a tune: section" do
    File.write(file, File.read(file).sub(/^tune:.*\n/, ""))
    err = StringIO.new
    code = Rackbench::CLI.run(["tune", file, "--results", results], out: StringIO.new, err: err)
    err = err.string
    assert_equal Rackbench::CLI::EXIT_USAGE, code
    assert_match(/tune\.yml: no tune: section/, err)
  end
end
