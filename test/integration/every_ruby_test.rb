# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"
require "support/test_rubies"

# Every part of rackbench on every CRuby built here: the system's 3.1, and
# 3.3.8 and 3.4.5 built from source (test/support/test_rubies.rb), each
# with and without YJIT, under Puma and Unicorn, on rack-hello and
# rails-hello. Every process of every trial must be the ruby and JIT its
# label names, and the counting agent (GC.stat, RubyVM.stat and YJIT's
# stats, whose keys differ between 3.1, 3.3 and 3.4) must give its counts
# for every process. Then Vernier profiles the cpu app on 3.4.
describe "every part on every ruby (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-every-ruby") }
  after { FileUtils.rm_rf(dir) }

  # label => [the version every process reports, JIT]
  RUBIES = {
    "ruby" => [RUBY_VERSION, nil], "ruby-yjit" => [RUBY_VERSION, "yjit"],
    "r33" => ["3.3.8", nil], "r33-yjit" => ["3.3.8", "yjit"],
    "r34" => ["3.4.5", nil], "r34-yjit" => ["3.4.5", "yjit"]
  }.freeze

  it "runs 3.1, 3.3 and 3.4, with and without YJIT, under Puma and Unicorn, as named, with every inside count" do
    file = File.join(dir, "every.yml")
    File.write(file, <<~YAML)
      name: every-ruby
      rubies:
        - ruby
        - { name: ruby-yjit, ruby: ruby, options: [--yjit] }
        - { name: r33, build: { source: #{TestRubies.tarball("3.3")} } }
        - { name: r33-yjit, ruby: r33, options: [--yjit] }
        - { name: r34, build: { source: #{TestRubies.tarball("3.4")} } }
        - { name: r34-yjit, ruby: r34, options: [--yjit] }
      servers: [puma, unicorn]
      apps: [rack-hello, rails-hello]
      processes: 2
      load: { connections: 2, duration: 1s, warmup: 0.3s, timeout: 10s }
    YAML
    results = File.join(dir, "results")

    out, err, status = rackbench("run", file, "--results", results, stdin_data: "")

    assert status.success?, "run failed: #{err}\n#{out.lines.grep(/FAILED/).join}#{out.lines.last(5).join}"
    trials = Rackbench::Store.open(results, &:trials)
    assert_equal RUBIES.size * 2 * 2, trials.size
    trials.each do |trial|
      where = "#{trial.ruby} #{trial.server} #{trial.app}"
      assert_equal "ok", trial.status, "#{where}: #{trial.reason}"
      version, jit = RUBIES.fetch(trial.ruby)
      identity = trial.identity
      assert_match(/\Aruby #{Regexp.escape(version)}/, identity["description"], where)
      assert_equal 3, identity["processes"].size, "#{where}: master and 2 workers"
      assert_equal [jit], identity["processes"].map { |p| p["jit"] }.uniq, where
      assert_empty identity["mismatches"], where

      inside = trial.inside
      assert_empty inside["missing"], "#{where}: every process gave its counts"
      assert_equal identity["processes"].map { |p| p["pid"] }.sort, inside["processes"].map { |p| p["pid"] }.sort, where
      inside["processes"].each do |process|
        assert_kind_of Integer, process.dig("gc", "count"), where
        assert_kind_of Integer, process["allocated_objects"], where
        assert_kind_of Hash, process["vm"], where
        assert_equal(jit == "yjit", process.dig("yjit", "enabled") == true, "#{where}: YJIT's own stats")
      end
      workers = inside["processes"].select { |p| p["role"] == "worker" }
      assert(workers.any? { |p| p["allocated_objects"].positive? }, "#{where}: the workers served the window")
    end
    rails = trials.select { |t| t.app == "rails-hello" }.map { |t| [t.ruby, t.gem_versions["rails"]] }.to_h
    assert_equal 1, rails.values.uniq.size, "one Rails on every ruby: #{rails}"
  end

  it "profiles the cpu app with Vernier on 3.4: the Mandelbrot method on top" do
    file = File.join(dir, "vernier.yml")
    File.write(file, <<~YAML)
      name: vernier-cpu
      seed: 1
      batches: 1
      rubies: [{ name: r34, build: { source: #{TestRubies.tarball("3.4")} } }]
      servers: [puma]
      apps: [cpu]
      processes: 2
      load: { connections: 2, duration: 2s, warmup: 0.5s, timeout: 10s }
      profile: { tool: vernier, mode: cpu }
    YAML
    results = File.join(dir, "results")

    out, err, status = rackbench("profile", file, "--results", results, "--json",
                                      stdin_data: "")

    assert status.success?, "#{err}\n#{out.lines.last(20).join}"
    profile = JSON.parse(out).fetch("profiles").first
    assert_equal %w[vernier cpu 1000], profile.values_at("tool", "mode", "interval").map(&:to_s)
    top = profile["top_self"].first
    assert_match(/\AMandelbrot[.#]escape_count\z/, top["name"], profile["top_self"].first(5).inspect)
    assert_match(%r{apps/cpu/mandelbrot\.rb\z}, top["file"])
    assert_operator top["self_share"], :>, 0.3
    assert_operator profile["processes"], :>=, 3, "Puma's master and its two workers"
    assert_empty profile["missing"]
  end
end
