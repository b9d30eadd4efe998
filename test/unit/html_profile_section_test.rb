# frozen_string_literal: true

require "test_helper"
require_relative "../support/real_profiles"

# The profile on the HTML page (HtmlReport::ProfileSection and
# Charts::Flame): the icicle's rectangles as FlameTree laid them out,
# labels only where they fit, and no document string ever as markup.
describe Rackbench::HtmlReport::ProfileSection do
  def entry(profile, config_id: "ruby=ruby app=cpu")
    Rackbench::Report::Profiles::Entry.new(config_id: config_id, dims: {}, trial_keys: ["k#profile"], profile: profile,
                                           missing: []).to_h
  end

  let(:real) { Rackbench::Profile::Dump.from_results(RealProfiles.work(outer: 300, inner: 700), pid: 1) }

  it "draws one rectangle per flame node, from x0 to x1 on the depth's row, coloured by whose code it is" do
    doc = entry(real)
    spec = Rackbench::HtmlReport::Charts::Flame.spec(doc)
    rows = spec[:data][:values]
    assert_equal doc["flame"].size, rows.size
    assert_equal [0, real.samples], spec.dig(:encoding, :x, :scale, :domain)
    root = rows.first
    assert_equal ["all", 0, 0, real.samples, 1.0], root.values_at("library", "depth", "x0", "x1", "total_share")
    inner = rows.find { |r| r["name"] == "RealProfiles::ProfileWork#inner" }
    assert_equal "app", inner["library"]
    assert_equal inner["x1"] - inner["x0"], inner["total"]
    assert_operator inner["self_share"], :>=, 0.69
    rows.each do |row|
      parent = rows.find { |r| r["depth"] == row["depth"] - 1 && r["x0"] <= row["x0"] && row["x1"] <= r["x1"] }
      assert parent, "#{row["name"]} lies under a frame of the row above" unless row["depth"].zero?
    end
    assert_equal spec[:height], Rackbench::HtmlReport::Charts::Flame::ROW_PX * (rows.map { |r| r["depth"] }.max + 1)
  end

  it "labels a frame only when its name fits, cut with an ellipsis otherwise" do
    flame = Rackbench::HtmlReport::Charts::Flame
    assert_equal "", flame.label("Object#mandelbrot", 20)
    assert_equal "Object#mandelbrot", flame.label("Object#mandelbrot", 300)
    cut = flame.label("Object#mandelbrot", 60)
    assert cut.end_with?("…")
    assert_operator cut.size, :<, "Object#mandelbrot".size
  end

  it "tells gems, C functions and the standard library apart" do
    flame = Rackbench::HtmlReport::Charts::Flame
    node = ->(file) { { "file" => file, "parent" => 0 } }
    assert_equal "puma", flame.library(node.call("/cache/gems/ruby/3.1.0/gems/puma-6.4.2/lib/puma/server.rb"))
    assert_equal "C", flame.library(node.call("<cfunc>"))
    assert_equal "ruby", flame.library(node.call(File.join(RbConfig::CONFIG["rubylibprefix"], "3.1.0/set.rb")))
    assert_equal "app", flame.library(node.call("/srv/app/config.ru"))
  end

  it "renders the summary, the chart and both top tables, escaping every frame's name" do
    frames = [{ "name" => "<script>alert(1)</script>", "file" => "x.rb", "line" => 1 }]
    hostile = Rackbench::Profile::Merged.new(tool: "stackprof", mode: "cpu", interval: 1000, frames: frames,
                                             stacks: [[[0], 5]], processes: [{ "pid" => 1, "samples" => 5 }])
    html = Rackbench::HtmlReport::ProfileSection.render(entry(hostile, config_id: "a&b"), id: "profile-7")
    refute_includes html.gsub(%r{<script type="application/json".*?</script>}m, ""), "<script>alert"
    assert_includes html, "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert_includes html, %(<h3>a&amp;b</h3>)
    assert_includes html, %(id="chart-profile-7" data-chart data-spec="spec-profile-7")
    assert_includes html, "stackprof cpu mode, every 1000 µs: 5 samples from 1 process(es) in 1 profiled trial, merged."
    assert_equal 2, html.scan("<table class=\"top-frames\">").size
    json = html[%r{<script type="application/json" id="spec-profile-7">(.*?)</script>}m, 1]
    refute_includes json, "</script"
  end

  it "has no chart for a profile without samples" do
    empty = Rackbench::Profile::Merged.new(tool: "stackprof", mode: "cpu", interval: 1000, frames: [], stacks: [])
    assert_nil Rackbench::HtmlReport::Charts::Flame.spec(entry(empty))
    html = Rackbench::HtmlReport::ProfileSection.render(entry(empty))
    assert_includes html, "No samples."
    refute_includes html, "data-chart"
  end

  it "draws each configuration's profile in its part of the inside section, and nothing without profiles" do
    fixture = JSON.parse(File.read(File.expand_path("../fixtures/report_document.json", __dir__)))
    plain = Rackbench::HtmlReport.new(fixture).render
    refute_includes plain, %(id="chart-profile-1")
    refute_includes plain, %(<section id="inside">)
    config = fixture["configs"][1]
    html = Rackbench::HtmlReport.new(fixture.merge("profiles" => [entry(real, config_id: config["id"])])).render
    part = html[%r{<section id="inside">.*?</section>}m]
    refute_nil part, "the inside section holds the profile"
    assert_includes html, %(<a href="#inside">Inside the server</a>)
    assert_includes part, %(<h3 id="inside-1">)
    assert_includes part, %(id="chart-profile-1")
    assert_equal 1, html.scan(%(id="chart-profile-1")).size
    refute_includes html, %(<section id="profiles">)

    # `rackbench profile`: profiled trials only, no measured configuration.
    html = Rackbench::HtmlReport.new(fixture.merge("profiles" => [entry(real, config_id: "ruby=other")])).render
    assert_includes html, %(<section id="profiles">)
    assert_includes html, %(<a href="#profiles">Profiles</a>)
    assert_equal 1, html.scan(%(id="chart-profile-1")).size
  end
end
