# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/fakes"
require_relative "../fixtures/capacity_support"
require "rackbench/cli/capacity_command"

# `rackbench capacity` over the Runner's fakes: the table, --json, the
# files it writes, the refusal to run over a stored search without
# --resume, and the exit code of a search that could not conclude.
describe Rackbench::CLI::CapacityCommand do
  include Rackbench::Test::CapacitySupport

  let(:dir) { Dir.mktmpdir("rackbench-capacity-cli") }
  let(:results) { File.join(dir, "results") }
  let(:file) do
    File.join(dir, "cap.yml").tap do |path|
      File.write(path, <<~YAML)
        name: cap-cli
        servers: [puma]
        apps: [rack-hello]
        load: { duration: 0.1s, warmup: 0s, connections: 64 }
        capacity: { p99: 50ms, start_rate: 100, resolution: 10%, confirmations: 1 }
      YAML
    end
  end
  let(:out) { StringIO.new }
  let(:err) { StringIO.new }

  after { FileUtils.rm_rf(dir) }

  def capacity(engine, *args)
    command = Rackbench::CLI::CapacityCommand.new(out: out, err: err, steps: ->(d, o, e, s) { fake_steps(engine, d, out: o, err: e, store: s) })
    command.run([file, "--results", results, *args])
  end

  def ceiling_engine(**options)
    Rackbench::Test::CapacitySupport::CeilingEngine.new(ceiling: 300, **options)
  end

  it "prints the answers' table and the steps, and writes capacity.json, capacity.html and capacity.log" do
    # --wide: the table's rows whole (a row is matched on one line).
    assert_equal Rackbench::CLI::EXIT_OK, capacity(ceiling_engine, "--wide")
    assert_match(/\[c1 b1\] step 1 ramp 100 req\/s: pass \(p99 12\.\d\dms, errors 0\.00%\)/, out.string)
    assert_match(/\[c1 b1\] step 3 ramp 400 req\/s: fail \(p99 \d+\.\d\dms, errors 0\.00%\): p99 \d+\.\d\dms above 50\.00ms/, out.string)
    assert_match(/\| puma rack-hello 1x1 \| +300 \| +- \| 25.0 req\/s \| +25,920,000 \|/, out.string)
    assert_includes out.string, "Curves: #{File.join(results, "capacity.html")}"
    doc = JSON.parse(File.read(File.join(results, "capacity.json")))
    assert_includes (272..300), doc["configs"].first["capacity_rps"]
    assert File.file?(File.join(results, "capacity.html"))
    assert_match(/Experiment cap-cli\.capacity\.c1\.b1\.s01\.r100/, File.read(File.join(results, "capacity.log")))
  end

  it "prints the searches and the first step's plan with --dry-run, and runs nothing" do
    engine = ceiling_engine
    assert_equal Rackbench::CLI::EXIT_OK, capacity(engine, "--dry-run")
    assert_match(/Capacity cap-cli: p99 <= 50\.00ms, resolution 10%, start 100 req\/s, ramp x2\.0/, out.string)
    assert_match(/batch 1 \(seed 1001\) c1: .*server=puma.* -> first step cap-cli\.capacity\.c1\.b1\.s01\.r100/, out.string)
    assert_match(/Plan for cap-cli\.capacity\.c1\.b1\.s01\.r100/, out.string)
    assert_equal 0, engine.calls
    refute File.exist?(File.join(results, "capacity.json"))
  end

  it "prints JSON with --json, the steps going to stderr; --batches and --seed reach the searches" do
    assert_equal Rackbench::CLI::EXIT_OK, capacity(ceiling_engine, "--json", "--batches", "2", "--seed", "7")
    doc = JSON.parse(out.string)
    assert_equal "rackbench-capacity", doc["format"]
    assert_equal [7, 2], doc["experiment"].values_at("seed", "batches")
    assert_equal [[1, 7001], [2, 7002]], doc["configs"].first["searches"].map { |s| s.values_at("batch", "seed") }
    assert(doc["configs"].first["interval_rps"].all?(Numeric), "two batches give an interval")
    assert_match(/step 1 ramp 100 req\/s: pass/, err.string)
  end

  it "refuses a results directory that holds the search without --resume; --resume replays and continues" do
    interrupted = ceiling_engine(interrupt_at: 3)
    assert_equal Rackbench::CLI::EXIT_INTERRUPTED, capacity(interrupted)
    assert_match(/resume with rackbench capacity #{Regexp.escape(file)} --resume --results #{Regexp.escape(results)}/, err.string)
    error = assert_raises(Rackbench::UsageError) { capacity(ceiling_engine) }
    assert_match(/already holds steps of capacity search cap-cli: add --resume/, error.message)
    resumed = ceiling_engine
    assert_equal Rackbench::CLI::EXIT_OK, capacity(resumed, "--resume")
    assert_equal 400.0, resumed.rates.first, "the interrupted third step runs first; the two stored ones are replayed"
  end

  it "exits 1 when a search stayed unresolved, and says why in the table's notes" do
    saturated = Class.new(Rackbench::Test::CapacitySupport::CeilingEngine) do
      def run(settings, **options)
        result = super
        Rackbench::LoadResult.new(result.to_h.merge("cpu" => result.cpu.merge("saturated" => true, "utilization" => 0.99)))
      end
    end
    assert_equal Rackbench::CLI::EXIT_FAILURE, capacity(saturated.new(ceiling: 300), "--wide")
    assert_match(/step 1 ramp 100 req\/s: INVALID \(p99 12\.\d\dms, errors 0\.00%\): the engine's CPU was saturated/, out.string)
    assert_match(/batch 1: the step at 100 req\/s was invalid 3 times/, out.string)
    assert_match(/\| puma rack-hello 1x1 \| +none \|/, out.string)
  end
end
