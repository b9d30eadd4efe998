# frozen_string_literal: true

require "test_helper"
require "rackbench/bisect"
require_relative "../support/report_store"

# How a confirmation run's two commits are paired (Judge#within): each
# configuration of the later commit against the same configuration of the
# earlier one, a variant of the walked ruby against its own variant at the
# parent, never against the walked ruby itself.
describe Rackbench::Bisect::Judge do
  let(:dir) { Dir.mktmpdir("rackbench-bisect-judge") }

  after { FileUtils.rm_rf(dir) }

  def settings
    Rackbench::Bisect::Settings.build(good: "v1", bad: "main", default_measure: "rps", min_batches: 5)
  end

  # A confirmation run of dev at commits a and b, with two variants:
  # dev-arenas (the same at both) and dev-jit (10% worse at b).
  def report
    configs = {
      ReportStore.dims(ruby: "dev-a") => ReportStore.noisy(1000, 0.001, 5, 1),
      ReportStore.dims(ruby: "dev-arenas-a") => ReportStore.noisy(800, 0.001, 5, 2),
      ReportStore.dims(ruby: "dev-jit-a") => ReportStore.noisy(1200, 0.001, 5, 3),
      ReportStore.dims(ruby: "dev-b") => ReportStore.noisy(1000, 0.001, 5, 4),
      ReportStore.dims(ruby: "dev-arenas-b") => ReportStore.noisy(800, 0.001, 5, 5),
      ReportStore.dims(ruby: "dev-jit-b") => ReportStore.noisy(1080, 0.001, 5, 6)
    }
    Rackbench::Store.open(dir) do |store|
      id = ReportStore.fill(store, configs, name: "confirm")
      Rackbench::Report.new(store, experiment_id: id, **settings.report_options)
    end
  end

  it "pairs each of the later commit's configurations with its own at the earlier commit, and finds a variant's step" do
    labels = { "dev-b" => "dev-a", "dev-arenas-b" => "dev-arenas-a", "dev-jit-b" => "dev-jit-a" }
    judgement = Rackbench::Bisect::Judge.new(settings).within(report, "ruby", labels, 0.01)
    pairs = judgement.gate.results.to_h { |r| [[r.pair.baseline.dims["ruby"], r.pair.candidate.dims["ruby"]], r.status] }
    assert_equal({ %w[dev-a dev-b] => Rackbench::Gate::OK, %w[dev-arenas-a dev-arenas-b] => Rackbench::Gate::OK,
                   %w[dev-jit-a dev-jit-b] => Rackbench::Gate::REGRESSED }, pairs)
    assert_equal Rackbench::Bisect::Search::WORSE, judgement.verdict
    assert_match(/\A10\.\d\d% worse/, judgement.text)
  end
end
