# frozen_string_literal: true

require "test_helper"
require "rackbench/tune"

# The pieces of a tuning that are pure functions: the memory model, the
# scorer and the knee.
describe "Rackbench::Tune model, scorer and knee" do
  MODEL_MB = 1_000_000
  Point = Rackbench::Tune::MemoryModel::Point
  Score = Rackbench::Tune::Scorer::Score

  def record(threads:, processes:, batch: 1, status: "ok", inside: nil, result: nil)
    Rackbench::Trial::Record.new(key: "k#{threads}-#{batch}", batch: batch, kind: "http", status: status, threads: threads,
                                 processes: processes, inside: inside, result: result, sample: { "pss_peak_bytes" => 200 * MODEL_MB })
  end

  def pss(role, mb)
    { "pid" => 1, "role" => role, "duration_s" => 1.0, "memory" => { "window_end" => { "pss_bytes" => mb * MODEL_MB } } }
  end

  def score(median, ci: nil)
    Score.new(per_batch: [], median: median, ci95: ci, qualified: median.positive?)
  end

  describe Rackbench::Tune::MemoryModel do
    it "takes the master and the mean worker from the agent's per-process PSS, and interpolates threads" do
      model = Rackbench::Tune::MemoryModel.from_records(
        [record(threads: 1, processes: 2, inside: { "processes" => [pss("master", 60), pss("worker", 40), pss("worker", 42)] }),
         record(threads: 9, processes: 2, inside: { "processes" => [pss("master", 61), pss("worker", 49), pss("worker", 49)] }),
         record(threads: 4, processes: 2, status: "failed")]
      )
      assert_equal 61 * MODEL_MB, model.master_bytes
      assert_equal [41 * MODEL_MB, 45 * MODEL_MB, 49 * MODEL_MB, 41 * MODEL_MB, 49 * MODEL_MB], [1, 5, 9, 0, 32].map { |t| model.worker_bytes(t) }
      assert_equal 61 * MODEL_MB + 3 * 45 * MODEL_MB, model.tree_bytes(3, 5)
      assert_equal 200 * MODEL_MB, model.to_h["points"].first["tree_pss_peak_bytes"]
    end

    it "counts a server that forks none as workers only, and has no model without the agent's PSS" do
      model = Rackbench::Tune::MemoryModel.from_records([record(threads: 4, processes: 1, inside: { "processes" => [pss("single", 70)] })])
      assert_equal [0, 70 * MODEL_MB], [model.master_bytes, model.worker_bytes(4)]
      assert_nil Rackbench::Tune::MemoryModel.from_records([record(threads: 4, processes: 1)])
      partial = { "processes" => [pss("master", 60), { "pid" => 2, "role" => "worker" }] }
      assert_nil Rackbench::Tune::MemoryModel.from_records([record(threads: 4, processes: 2, inside: partial)])
    end
  end

  describe Rackbench::Tune::Scorer::WithinLatency do
    let(:scorer) { Rackbench::Tune::Scorer::WithinLatency.new(percentile: 99.0, target_us: 50_000) }

    it "scores each batch's throughput when its percentile holds, else 0, and reads the summary without a histogram" do
      held = record(threads: 1, processes: 1, result: { "rps" => 300.0, "latency_us" => { "p99" => 49_000.0 } })
      missed = record(threads: 1, processes: 1, batch: 2, result: { "rps" => 500.0, "latency_us" => { "p99" => 51_000.0 } })
      failed = record(threads: 1, processes: 1, batch: 3, status: "failed")
      s = scorer.score([missed, held, failed])
      assert_equal [[1, 300.0, 300.0], [2, 500.0, 0.0]], s.per_batch.map { |b| [b.batch, b.rps, b.value] }
      assert_equal 150.0, s.median
      assert_nil s.ci95, "an interval needs 5 batches"
      five = (1..5).map { |b| record(threads: 1, processes: 1, batch: b, result: { "rps" => 300.0 + b, "latency_us" => { "p99" => 1.0 } }) }
      low, high = scorer.score(five).ci95
      assert_operator low, :<, high
      assert_nil scorer.score([failed])
      assert_match(/p99 is at most 50\.00ms/, scorer.description)
    end
  end

  describe Rackbench::Tune::Knee do
    it "is the fewest threads at or above the lower end of the best's interval" do
      knee = Rackbench::Tune::Knee.of(2, [[8, score(810, ci: [780, 840])], [1, score(210)], [4, score(790)], [16, score(0)]],
                                      tolerance: 0.05)
      assert_equal [4, 8, "interval", 780], knee.values_at("knee_threads", "best_threads", "rule", "threshold")
      assert_match(/\A2 processes: 4 threads give 790 req\/s, within the 95% interval of the best \(8 threads: 810 req\/s\); more threads \(8, 16\)/, knee["text"])
      assert_in_delta(-1.0, knee["gains"].last["gain"])
      assert_in_delta 790.0 / 210 - 1, knee["gains"][0]["gain"]
    end

    it "keeps the tolerance when the best's interval is wider: a noisy best makes no low score as good" do
      knee = Rackbench::Tune::Knee.of(1, [[1, score(210)], [4, score(700)], [8, score(810, ci: [0, 900])]], tolerance: 0.05)
      assert_equal [8, "tolerance"], knee.values_at("knee_threads", "rule")
      assert_in_delta 769.5, knee["threshold"]
      assert_match(/\A1 process: 8 threads score best/, knee["text"])
    end

    it "uses the tolerance without an interval, and is nil when nothing held" do
      knee = Rackbench::Tune::Knee.of(1, [[1, score(100)], [2, score(196)], [4, score(200)]], tolerance: 0.05)
      assert_equal [2, "tolerance"], knee.values_at("knee_threads", "rule")
      assert_nil Rackbench::Tune::Knee.of(1, [[1, score(0)]], tolerance: 0.05)
    end
  end
end
