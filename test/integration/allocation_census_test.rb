# frozen_string_literal: true

require "test_helper"
require "json"

# Allocations by class (`profile: { tool: objspace }`,
# agent/allocation_census.rb) in a real Puma with two workers: the counted
# app with no widgets against the same app allocating WIDGETS CountedWidget
# objects per request (a class nothing else allocates). The diff of the two
# sides' censuses must find exactly that class, at WIDGETS per request,
# and nothing else of note; every process counts over its own span.
describe "allocations by class in a real server (integration)" do
  before { require_engine! }

  APP = File.expand_path("../fixtures/apps/counted", __dir__)
  WIDGETS = 40

  let(:dir) { Dir.mktmpdir("rackbench-census-it") }
  let(:results) { File.join(dir, "results") }
  after { FileUtils.rm_rf(dir) }

  it "finds the class a change allocates, at the count per request it allocates" do
    file = File.join(dir, "census.yml")
    # Windows of a count of requests: a busy machine delays them, never
    # empties them. 2,000 requests of this app allocate far fewer objects
    # than a span holds, so each process counts its whole window.
    File.write(file, <<~YAML)
      name: census
      seed: 3
      batches: 2
      servers: [puma]
      apps:
        - { name: plain, path: #{APP}, health: /up }
        - { name: widgets, path: #{APP}, health: /up, env: { WIDGETS_PER_REQUEST: "#{WIDGETS}" } }
      processes: 2
      threads: 1
      profile: { tool: objspace, trials: 2 }
      load: { connections: 2, count: 2000, warmup: 0.5s, timeout: 10s }
    YAML
    stdout, stderr, status = rackbench("run", file, "--results", results, "--wide")
    assert status.success?, "#{stderr}\n#{stdout.lines.last(30).join}"
    assert_match(/Allocations by class of .*app=widgets.*: objspace's census/, stdout)
    assert_match(/Allocations by class \(objects per request, objspace's census\)/, stdout)

    doc = JSON.parse(rackbench("report", "--results", results, "--json").first)
    widgets_profile = doc["profiles"].find { |p| p["config_id"].include?("app=widgets") }
    assert_equal %w[objspace object], widgets_profile.values_at("tool", "mode")
    # Puma's master and both workers gave a census, in both profiled trials.
    assert_empty widgets_profile["missing"]
    assert_operator widgets_profile["processes"], :>=, 6

    census = doc["diffs"].map { |d| d["profile"] }.compact.first
    refute_nil census, "a diff of the two sides' censuses"
    assert_equal [2, 2], census["batches"]
    top = census["rows"].first
    assert_equal "CountedWidget", top["name"], census["rows"].first(5).map { |r| r.slice("name", "difference") }.inspect
    assert_equal "b", top["only"]
    # Each process counts from its own view of the window's edges, the
    # engine its responses: a few requests apart in 2,000.
    assert_in_delta WIDGETS, top["difference"], WIDGETS * 0.05
    # The same app's other allocations, per request, on both sides.
    others = census["rows"].drop(1).reject { |r| r["difference"].abs < 2 }
    assert_empty others.map { |r| r.slice("name", "a", "b") }, "no other class moved"
    assert_operator census["rows"].sum { |r| r["b"] }, :>, WIDGETS, "the server's own allocations are counted too"
  end
end
