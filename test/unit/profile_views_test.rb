# frozen_string_literal: true

require "test_helper"
require_relative "../support/real_profiles"

# What the reports make of a profile: top frames by self and total, the
# flame graph's tree, the speedscope file. On real StackProf results
# (object mode: the samples are the allocations, known exactly) and on a
# profile written by hand where a figure needs to be exact.
describe "profile views" do
  # frames: main, a, b; stacks: main>a>b x6, main>a x3, main>b x1, main>a>a>b (recursion) x2
  let(:hand) do
    Rackbench::Profile::Merged.new(tool: "stackprof", mode: "cpu", interval: 1000,
               frames: [{ "name" => "main", "file" => "m.rb", "line" => 1 }, { "name" => "a", "file" => "a.rb", "line" => 2 },
                        { "name" => "b", "file" => "b.rb", "line" => 3 }],
               stacks: [[[0, 1, 2], 6], [[0, 1], 3], [[0, 2], 1], [[0, 1, 1, 2], 2]])
  end
  let(:real) { Rackbench::Profile::Dump.from_results(RealProfiles.work(outer: 300, inner: 700), pid: 1) }

  describe "top frames" do
    it "ranks by self (the leaf) and by total (anywhere on the stack, a recursive frame once per sample)" do
      by_self = Rackbench::Profile::TopFrames.call(hand, by: :self)
      assert_equal [["b", 9, 9], ["a", 3, 11], ["main", 0, 12]], by_self.map { |r| [r.name, r.self_samples, r.total_samples] }
      by_total = Rackbench::Profile::TopFrames.call(hand, by: :total, limit: 2)
      assert_equal %w[main a], by_total.map(&:name)
      assert_in_delta 11.0 / 12, by_total.last.total_share
      assert_in_delta 3.0 / 12, by_total.last.self_share
    end

    it "puts the method that allocates most on top by self in a real profile, its caller on top of the two by total" do
      top = Rackbench::Profile::TopFrames.call(real, by: :self, limit: 2)
      assert_equal %w[RealProfiles::ProfileWork#inner RealProfiles::ProfileWork#outer], top.map(&:name)
      assert_operator top.first.self_samples, :>=, 700
      totals = Rackbench::Profile::TopFrames.call(real, by: :total).to_h { |r| [r.name, r.total_samples] }
      assert_operator totals["RealProfiles::ProfileWork#outer"], :>=, 1000
      assert_operator totals["RealProfiles::ProfileWork#outer"], :>, totals["RealProfiles::ProfileWork#inner"]
    end
  end

  describe "the flame tree" do
    it "has one node per path, parents first, whose totals add up" do
      nodes = Rackbench::Profile::FlameTree.nodes(hand, min_share: 0)
      root = nodes.first
      assert_equal ["all", nil, 12], root.values_at("name", "parent", "total")
      paths = nodes.to_h do |node|
        path = []
        current = node
        while current
          path.unshift(current["name"])
          current = current["parent"] && nodes[current["parent"]]
        end
        [path.join(">"), node["total"]]
      end
      assert_equal({ "all" => 12, "all>main" => 12, "all>main>a" => 11, "all>main>a>b" => 6, "all>main>a>a" => 2,
                     "all>main>a>a>b" => 2, "all>main>b" => 1 }, paths)
      nodes.each do |node|
        children = nodes.select { |child| child["parent"] == node["id"] }
        assert_equal node["total"], node["value"] + children.sum { |c| c["total"] }, node["name"]
        children.each { |child| assert_operator child["id"], :>, node["id"] }
      end
    end

    it "folds a path below min_share into its parent's value, so widths stay true" do
      nodes = Rackbench::Profile::FlameTree.nodes(hand, min_share: 0.1) # under 1.2 samples: main>b (1) goes
      refute(nodes.any? { |n| n["name"] == "b" && nodes[n["parent"]]["name"] == "main" })
      main = nodes.find { |n| n["name"] == "main" }
      assert_equal 1, main["value"], "main's own 0 samples plus the folded b's 1"
      assert_equal real.samples, Rackbench::Profile::FlameTree.nodes(real).first["total"]
    end
  end

  describe "the speedscope file" do
    # The structure speedscope's schema asks of a file of sampled profiles
    # (https://www.speedscope.app/file-format-schema.json).
    def assert_speedscope(doc)
      assert_equal "https://www.speedscope.app/file-format-schema.json", doc["$schema"]
      frames = doc.dig("shared", "frames")
      assert_kind_of Array, frames
      frames.each do |frame|
        assert_kind_of String, frame["name"]
        assert_empty frame.keys - %w[name file line col]
        assert_kind_of(Integer, frame["line"]) if frame.key?("line")
      end
      assert_operator doc["profiles"].size, :>=, 1
      doc["profiles"].each do |profile|
        assert_equal "sampled", profile["type"]
        assert_kind_of String, profile["name"]
        assert_includes %w[none nanoseconds microseconds milliseconds seconds bytes], profile["unit"]
        assert_equal profile["samples"].size, profile["weights"].size
        profile["samples"].flatten.each { |i| assert_includes 0...frames.size, i }
        assert_equal profile["endValue"] - profile["startValue"], profile["weights"].sum
      end
    end

    it "shares the frames of every profile and weighs each stack by its samples times the interval" do
      doc = JSON.parse(JSON.generate(Rackbench::Profile::Speedscope.document({ "hand" => hand, "real" => real },
                                                                             name: "rackbench test")))
      assert_speedscope(doc)
      frames = doc.dig("shared", "frames")
      assert_equal frames.map { |f| f.values_at("name", "file", "line") }.uniq.size, frames.size, "no frame twice"
      hand_profile, real_profile = doc["profiles"]
      assert_equal %w[microseconds none], [hand_profile["unit"], real_profile["unit"]]
      assert_equal 12_000, hand_profile["endValue"]
      assert_equal %w[main a b], hand_profile["samples"].first.map { |i| frames[i]["name"] }, "outermost first"
      assert_equal real.samples, real_profile["weights"].sum
    end
  end
end
