# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "rbconfig"
require "support/test_rubies"

# One set of gems per app and server, proven by what every server process
# loaded (the identity check compares each process's Gem.loaded_specs with
# the lock, and the record keeps the main process's):
#
# - rails-hello on the system's 3.1 and on 3.4.5: one Rails, resolved on
#   3.1 (3.4 alone would take the newest Rails 8);
# - gems: { rails: [~> 7.2.0, ~> 8.0.0] } on 3.4: each configuration's
#   processes load the Rails it names;
# - gems: per_ruby on 3.1 and 3.4: each ruby resolves its own Rails, and
#   the terminal, JSON and HTML reports flag the comparison, naming the gems.
#
# Which versions the mirror serves this month is not asserted, only what
# must hold whatever they are.
describe "gem sets (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-gem-sets") }
  after { FileUtils.rm_rf(dir) }

  RAILS_GEMS = %w[actionpack actionview activesupport railties].freeze

  def run_experiment(name, rubies, extra = "")
    file = File.join(dir, "#{name}.yml")
    File.write(file, <<~YAML)
      name: #{name}
      rubies: #{rubies}
      servers: [puma]
      apps: [rails-hello]
      processes: 2
      load: { connections: 2, duration: 0.5s, warmup: 0.5s, timeout: 10s }
      #{extra}
    YAML
    results = File.join(dir, name)
    # --wide: the report's lines whole (the gems' lines are matched whole).
    out, err, status = rackbench("run", file, "--results", results, "--wide", stdin_data: "")
    assert status.success?, "run failed: #{err}\n#{out.lines.last(30).join}"
    [out, results, Rackbench::Store.open(results, &:trials)]
  end

  def rubies_3_1_and_3_4
    "[ruby, { name: r34, build: { source: #{TestRubies.tarball("3.4")} } }]"
  end

  # Every trial ok, its processes (Puma's master and 2 workers) checked
  # against the lock, which the record's gems are.
  def assert_checked(trials)
    trials.each do |trial|
      where = "#{trial.ruby} #{trial.dims.except("ruby", "server", "app", "processes", "threads")}"
      assert_equal "ok", trial.status, "#{where}: #{trial.reason}"
      assert_equal 3, trial.identity["processes"].size, where
      assert_empty trial.identity["mismatches"], where
      gems = trial.identity["gems"]
      assert_equal trial.gem_versions.slice(*gems.keys), gems, "#{where}: loaded what the bundle locks"
      RAILS_GEMS.each { |name| assert gems[name], "#{where}: #{name} loaded" }
    end
  end

  it "runs one Rails on 3.1 and 3.4: the set resolved on 3.1, installed as is on 3.4" do
    out, _, trials = run_experiment("one-rails", rubies_3_1_and_3_4)

    assert_match(/^Gems: rails-hello \+ puma: one gem set, resolved on ruby \(ruby 3\.1\.\d+\S*\), installed as is for r34$/, out)
    assert_checked(trials)
    assert_equal 2, trials.size
    loaded = trials.to_h { |t| [t.ruby, t.identity["gems"].slice(*RAILS_GEMS)] }
    assert_equal 1, loaded.values.uniq.size, "one Rails on every ruby: #{loaded}"
    assert_equal 1, trials.map { |t| t.gem_versions.except("bundler") }.uniq.size, "one lock on every ruby"
    assert_operator Gem::Version.new(loaded["r34"]["railties"]), :<, Gem::Version.new("8"),
                    "3.1 cannot run Rails 8: the set is 3.1's"
    refute_includes out, "Gems that differ"
  end

  it "runs the Rails each configuration of a gem.rails dimension names" do
    file = "rubies: [{ name: r34, build: { source: #{TestRubies.tarball("3.4")} } }]"
    _, _, trials = run_experiment("rails-versions", file.delete_prefix("rubies: "),
                                  'gems: { rails: ["~> 7.2.0", "~> 8.0.0"] }')

    assert_checked(trials)
    assert_equal ["~> 7.2.0", "~> 8.0.0"], trials.map { |t| t.dims["gem.rails"] }.sort
    trials.each do |trial|
      requirement = Gem::Requirement.new(trial.dims["gem.rails"])
      gems = trial.identity["gems"]
      assert requirement.satisfied_by?(Gem::Version.new(gems["rails"])), "#{trial.dims["gem.rails"]}: rails #{gems["rails"]}"
      assert_equal [gems["rails"]], gems.slice(*RAILS_GEMS).values.uniq, "the rails gem holds its frameworks to its version"
      assert_equal({ "rails" => trial.dims["gem.rails"] }, trial.identity.dig("expected", "gem_pins"))
    end
  end

  it "lets each ruby resolve its own with gems: per_ruby, and flags the comparison in every view" do
    out, results, trials = run_experiment("per-ruby", rubies_3_1_and_3_4, "gems: per_ruby")

    assert_checked(trials)
    railties = trials.to_h { |t| [t.ruby, t.identity.dig("gems", "railties")] }
    refute_equal railties["ruby"], railties["r34"], "3.1 and 3.4 resolved their own Rails: #{railties}"
    assert_match(/^Gems: gems resolved by each ruby on its own \(gems: per_ruby\)$/, out)
    # The gems sort by name: actionpack comes first.
    assert_match(/^  r34: its servers loaded other gems than the baseline's \(ruby\), and no gem is a dimension here: actionpack #{Regexp.escape(railties["r34"])} vs #{Regexp.escape(railties["ruby"])} \(baseline\)/, out)
    assert_match(/^  rails-hello: .*railties.* #{Regexp.escape(railties["ruby"])} \(ruby\) vs #{Regexp.escape(railties["r34"])} \(r34\) \[g: not a dimension of the experiment\]$/, out)

    json, err, status = rackbench("report", "--results", results, "--json", stdin_data: "")
    assert status.success?, err
    document = JSON.parse(json)
    flag = document["configs"].last["flags"].find { |f| f["kind"] == "gems_differ" }
    assert_includes flag["gems"], "railties"
    entry = document["gem_differences"].find { |e| e["gems"].include?("railties") }
    assert_equal [false, ["ruby"]], entry.values_at("explained", "told_apart_by")

    html = File.read(File.join(results, "report.html"))
    assert_includes html, "Gems that differ between configurations"
    assert_match(/<td>[^<]*railties[^<]*<\/td><td>#{Regexp.escape(railties["ruby"])} \(ruby\) vs #{Regexp.escape(railties["r34"])} \(r34\)<\/td>/, html)
    assert_includes html, "no gem is a dimension here"
  end
end
