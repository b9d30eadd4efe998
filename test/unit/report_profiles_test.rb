# frozen_string_literal: true

require "test_helper"
require_relative "../support/report_store"
require_relative "../support/real_profiles"

# Profiled trials in a report: kept out of every figure (the profiler slows
# the server), their profiles merged per configuration across batches and
# shown as top frames.
describe "profiled trials in a report" do
  let(:dir) { Dir.mktmpdir("rackbench-report-profiles") }
  after { FileUtils.rm_rf(dir) }

  let(:fast) { ReportStore.dims(ruby: "fast") }
  let(:slow) { ReportStore.dims(ruby: "slow") }
  let(:configs) { { fast => ReportStore.noisy(1100, 0.02, 5, 1), slow => ReportStore.noisy(1000, 0.02, 5, 2) } }
  let(:mark) { Rackbench::Profile::Settings.new(tool: "stackprof", mode: "object").to_h }

  # A profiled trial of dims in batch, its throughput far off (as a
  # profiled server's would be), its profile written where the runner
  # writes it.
  def profiled_trial(results_dir, dims, batch, position, results)
    record = ReportStore.trial(dims, batch, position, 10.0, nil)
    key = "#{record.key}#profile"
    profile = Rackbench::Profile::Dump.from_results(results, pid: 100 + position)
    file = Rackbench::Profile::Files.write(results_dir, key, profile)
    record.with(key: key, load_settings: { "profile" => mark.merge("file" => file, "samples" => profile.samples,
                                                                   "processes" => 1, "missing" => []) })
  end

  # [report, its document] of a results directory holding configs, and
  # the profiled trials when asked.
  def report(name, profiled:)
    results_dir = File.join(dir, name)
    Rackbench::Store.open(results_dir) do |store|
      id = ReportStore.fill(store, configs)
      if profiled
        store.save_trial(id, profiled_trial(results_dir, fast, 1, 11, RealProfiles.work(outer: 300, inner: 700)))
        store.save_trial(id, profiled_trial(results_dir, fast, 2, 12, RealProfiles.work(outer: 100, inner: 100)))
        store.save_trial(id, profiled_trial(results_dir, slow, 1, 13, RealProfiles.work(outer: 900, inner: 10)))
      end
      report = Rackbench::Report.new(store, seed: 1)
      [report, report.to_h]
    end
  end

  it "leaves every figure as it is without the profiled trials" do
    plain, plain_doc = report("plain", profiled: false)
    profiled, profiled_doc = report("profiled", profiled: true)
    assert_equal 3, profiled.profiled_trials.size
    assert_empty plain.profiled_trials
    %w[configs trials dimensions rate_unit settings].each { |key| assert_equal plain_doc[key], profiled_doc[key], key }
    assert_equal plain.to_csv, profiled.to_csv
    refute plain_doc.key?("profiles")
    plain_text = Rackbench::Report::Terminal.new(plain).render
    profiled_text = Rackbench::Report::Terminal.new(profiled).render
    assert profiled_text.start_with?(plain_text.chomp), "the same report, the profiles after it"
  end

  it "merges a configuration's profiled trials across batches and shows its top frames" do
    report, doc = report("profiled", profiled: true)
    fast_profile, slow_profile = doc["profiles"].sort_by { |p| p["config_id"] }
    assert_equal Rackbench::Report.config_id(fast), fast_profile["config_id"]
    assert_equal 2, fast_profile["trials"].size
    assert_equal 2, fast_profile["processes"]
    merged = report.profiles.entries.find { |e| e.config_id == fast_profile["config_id"] }.profile
    assert_equal merged.samples, fast_profile["samples"]
    assert_operator RealProfiles.self_samples(merged, "RealProfiles::ProfileWork#inner"), :>=, 800
    assert_equal "RealProfiles::ProfileWork#inner", fast_profile["top_self"].first["name"]
    assert_equal "RealProfiles::ProfileWork#outer", slow_profile["top_self"].first["name"]
    assert_equal fast_profile["samples"], fast_profile["flame"].first["total"]

    text = Rackbench::Report::Terminal.new(report).render
    assert_match(/Profile of #{Regexp.escape(fast_profile["config_id"])}: stackprof object, every 1 allocation\(s\), \d+ samples from 2 process\(es\), 2 trials/, text)
    assert_match(/Top frames by self:\n +self +total +frame\n +\d+\.\d% +\d+\.\d%  RealProfiles::ProfileWork#inner  /, text)
    assert_match(/Top frames by total:/, text)
  end

  it "reports no profile for a profiled trial whose file is gone, and still keeps it out of the figures" do
    _, plain_doc = report("plain", profiled: false)
    FileUtils.mkdir_p(File.join(dir, "gone"))
    results_dir = File.join(dir, "gone")
    Rackbench::Store.open(results_dir) do |store|
      id = ReportStore.fill(store, configs)
      store.save_trial(id, profiled_trial(results_dir, fast, 1, 11, RealProfiles.work))
      FileUtils.rm_rf(File.join(results_dir, "profiles"))
      report = Rackbench::Report.new(store, seed: 1)
      assert report.profiles.empty?
      assert_equal plain_doc["configs"], report.to_h["configs"]
      refute_match(/Top frames/, Rackbench::Report::Terminal.new(report).render)
    end
  end
end
