# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"
require_relative "../fixtures/capacity_support"

# The capacity searches over the Runner and its fakes: every step is an
# ordinary stored experiment; an interrupted search resumes from the store
# and runs no step twice.
describe Rackbench::Capacity::Driver do
  include Rackbench::Test::CapacitySupport

  let(:dir) { Dir.mktmpdir("rackbench-capacity") }
  let(:experiment) do
    Rackbench::Experiment.parse(<<~YAML, source: "capacity.yml", base_dir: dir)
      name: cap-test
      seed: 5
      batches: 2
      rubies: [ruby]
      servers: [puma, webrick]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s, connections: 64 }
      capacity: { p99: 50ms, start_rate: 100, resolution: 10%, confirmations: 1, duration: 0.2s }
    YAML
  end

  after { FileUtils.rm_rf(dir) }

  def engine(**options)
    Rackbench::Test::CapacitySupport::CeilingEngine.new(ceiling: 300, **options)
  end

  def steps(engine, results_dir = dir)
    fake_steps(engine, results_dir)
  end

  def driver(engine, seen = [], results_dir = dir)
    Rackbench::Capacity::Driver.new(experiment, steps: steps(engine, results_dir),
                                                on_step: ->(job, step) { seen << [job, step] })
  end

  it "runs every step as a stored experiment of its own, with the step's rate, duration and seed" do
    fake = engine
    jobs = driver(fake).run
    assert_equal 4, jobs.size
    assert(jobs.all? { |j| j.search.result.status == :found })
    assert(jobs.all? { |j| (272..300).cover?(j.search.result.rate) }, jobs.map { |j| j.search.result.rate }.inspect)
    assert_equal jobs.flat_map { |j| j.search.steps.map(&:rate) }.sort, fake.rates.map(&:round).sort
    stored = Rackbench::Store.open(dir, &:experiments)
    assert_equal fake.calls, stored.size
    assert_match(/\Acap-test\.capacity\.c[12]\.b1\.s01\.r100\z/, stored.first[:name])
    step = Rackbench::Experiment.parse(stored.first[:source_text], base_dir: dir)
    assert_nil step.capacity, "a step is an ordinary experiment"
    assert_equal [1, 100.0, 0.2, 2.0], [step.batches, step.configurations.first.load[:rate],
                                        step.configurations.first.load[:duration_s],
                                        step.configurations.first.load[:timeout_s]]
    assert_equal [5001, 5002], jobs.map(&:seed).uniq.sort
    assert_equal 5001, step.seed
  end

  it "keeps the file's own load.timeout in the steps" do
    text = experiment.source_text.sub("connections: 64", "connections: 64, timeout: 3s")
    with_timeout = Rackbench::Experiment.parse(text, source: "capacity.yml", base_dir: dir)
    job = Rackbench::Capacity::Driver.new(with_timeout, steps: nil).jobs.first
    step = Rackbench::Capacity::Driver.new(with_timeout, steps: nil).step_experiment(job)
    assert_in_delta 3.0, step.configurations.first.load[:timeout_s]
  end

  it "interleaves the configurations' searches, batch by batch, each batch in its seeded order" do
    seen = []
    driver(engine, seen).run
    order = seen.map { |job, _| [job.batch, job.config_number] }
    assert_equal order.sort_by(&:first), order, "batch 2 starts after batch 1"
    first_of_batch1 = order.first(2).map(&:last)
    assert_equal [1, 2], first_of_batch1.sort, "the two searches of a batch take turns"
    jobs = Rackbench::Capacity::Driver.new(experiment, steps: nil).jobs
    assert_equal first_of_batch1, jobs.select { |j| j.batch == 1 }.map(&:config_number)
    orders = (1..8).map { |seed| Rackbench::Capacity::Driver.new(experiment.with(seed: seed), steps: nil).jobs.map(&:config_number) }
    assert_operator orders.uniq.size, :>, 1, "the order follows the seed"
  end

  it "resumes an interrupted search from the stored steps: no step runs twice, the answers are the same" do
    first = engine(interrupt_at: 6)
    assert_raises(Rackbench::Interrupted) { driver(first).run }
    assert_equal 6, first.calls
    resumed = engine
    assert driver(resumed).started?
    jobs = driver(resumed).run
    total = jobs.sum { |j| j.search.steps.size }
    assert_equal total, 5 + resumed.calls, "the five stored steps were replayed, not run again"
    assert_equal first.rates.last, resumed.rates.first, "the interrupted step runs first"
    assert_equal 0, engine.tap { |again| driver(again).run }.calls, "a finished search replays without running"

    other = Dir.mktmpdir("rackbench-capacity-straight")
    begin
      straight = driver(engine, [], other).run
      refute driver(engine, [], File.join(other, "none")).started?
      assert_equal straight.map { |j| j.search.steps.map(&:rate) }, jobs.map { |j| j.search.steps.map(&:rate) }
    ensure
      FileUtils.rm_rf(other)
    end
  end
end
