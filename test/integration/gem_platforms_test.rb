# frozen_string_literal: true

require "test_helper"
require "json"
require "support/test_rubies"

# One gem set for an app whose lock names a native gem's source gem, as
# Ruby 3.1's Bundler 2.3 writes it (test/fixtures/apps/native-ffi: ffi
# 1.17.2 and rack 3.1.16, where newer ones exist), on rubies whose Bundler
# takes the precompiled gem of the same version instead (Ruby 3.3.8's
# Bundler 2.5.22, when the app's Gemfile makes it re-resolve):
#
# - shared: the same versions load in every server process on 3.1, 3.3
#   and 3.4; the platforms are recorded and noted, never flagged g;
# - force_ruby_platform: every ruby compiles ffi from source, and the
#   record says so;
# - a version that really differs (test/fixtures/apps/ruby-conditional,
#   whose Gemfile asks 3.4 for another rack) stops the run in one line;
# - per_ruby: each ruby starts from the app's own lock and keeps every
#   version it can install, naming what it changed.
#
# ffi rather than nokogiri: ffi compiles in seconds, nokogiri's libxml2 for
# minutes per ruby. The same proof with nokogiri 1.18.10 and its build
# tool mini_portile2 (test/fixtures/apps/native-xml) on 3.1, 3.3.8 and
# 3.4.5, force_ruby_platform included, was run by hand: doc/performance.md,
# "Gem platforms".
#
# Bundler prefers a gem already installed in the ruby's gem directory when
# it re-resolves, so this file keeps ffi 1.17.2's source gem off 3.3: the
# force_ruby_platform test pins ffi 1.17.3.
#
# Every gem version comes from the fixtures' locks and Gemfiles (pinned);
# a mirror that lacks one fails the run with Bundler's line naming it.
describe "gem platforms (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-gem-platforms") }
  let(:fixtures) { File.expand_path("../fixtures/apps", __dir__) }
  after { FileUtils.rm_rf(dir) }

  def r33 = "{ name: r33, build: { source: #{TestRubies.tarball("3.3")} } }"
  def r34 = "{ name: r34, build: { source: #{TestRubies.tarball("3.4")} } }"

  # The app entries of +names+ (fixtures under test/fixtures/apps), each
  # checked by what its page says: ffi's version served the requests.
  def apps(*names, ffi: "1.17.2")
    bodies = { "native-ffi" => "ffi #{ffi} pid", "ruby-conditional" => "rack 3." }
    names.map do |name|
      "  - { name: #{name}, path: #{File.join(fixtures, name)}, expect_body: \"#{bodies.fetch(name)}\" }"
    end.join("\n")
  end

  # A window of a fixed count of requests, not of time: a machine busy with
  # other work delays it, never empties it.
  def run_experiment(name, rubies:, apps:, extra: "")
    file = File.join(dir, "#{name}.yml")
    File.write(file, <<~YAML)
      name: #{name}
      rubies: [#{rubies.join(", ")}]
      servers: [puma]
      apps:
      #{apps}
      processes: 2
      load: { connections: 2, count: 200, warmup_count: 20, timeout: 20s }
      #{extra}
    YAML
    results = File.join(dir, name)
    # --wide: the report's lines whole (the notes are matched whole).
    out, err, status = rackbench("run", file, "--results", results, "--wide")
    [out, err, status, results]
  end

  def assert_ran(out, err, status)
    reason = err.lines.grep(/\Arackbench: /).grep_v(/\Arackbench: warning: /).last
    failed = out.lines.grep(/failed trial|\.\.\. failed/).join
    assert status.success?, "run failed: #{reason || err.lines.last}#{failed}"
  end

  def trials(results)
    Rackbench::Store.open(results, &:trials).to_h { |t| [[t.app, t.ruby], t] }
  end

  # Every trial ok, each of its processes (Puma's master and 2 workers)
  # checked to load its bundle's versions.
  def assert_checked(trials)
    trials.each do |(app, ruby), trial|
      assert_equal "ok", trial.status, "#{app} on #{ruby}: #{trial.reason}"
      assert_equal 3, trial.identity["processes"].size, "#{app} on #{ruby}"
      assert_empty trial.identity["mismatches"], "#{app} on #{ruby}"
    end
  end

  # ruby => [ffi's version, how it was built] as each trial's processes loaded it.
  def ffi_by_ruby(trials)
    trials.select { |(app, _), _| app == "native-ffi" }
          .to_h { |(_, ruby), t| [ruby, [t.identity.dig("gems", "ffi"), t.identity.dig("gem_platforms", "ffi")]] }
  end

  def report_json(results)
    JSON.parse(assert_rackbench("report", "--results", results, "--json"))
  end

  it "runs one set whose source gem a newer Bundler installs precompiled: the same versions, platforms noted, no g" do
    out, err, status, results = run_experiment("shared", rubies: ["ruby", r33, r34], apps: apps("native-ffi"))
    assert_ran(out, err, status)
    assert_match(/^Gems: native-ffi \+ puma: one gem set, resolved on ruby \(ruby 3\.1\.\d+\S*\), installed as is for r33, r34$/, out)
    assert_includes out, "  native-ffi: r33 (ruby 3.3.8) runs the set's versions as other platforms: ffi 1.17.2 " \
                         "x86_64-linux-gnu (the set: source)\n"
    assert_includes out, "  native-ffi: r33 (ruby 3.3.8) adds to the gem set: base64 0.2.0\n"

    by = trials(results)
    assert_equal 3, by.size
    assert_checked(by)
    # The same ffi in every process of every ruby (the check above holds
    # each process to its lock; the locks hold the set's versions), built
    # as each ruby's Bundler chose; the app's page proved ffi 1.17.2 served.
    assert_equal({ "ruby" => ["1.17.2", "ruby"], "r33" => ["1.17.2", "x86_64-linux-gnu"], "r34" => ["1.17.2", "ruby"] },
                 ffi_by_ruby(by), "3.3's Bundler keeps a source gem already installed: is ffi-1.17.2 (not " \
                                  "-x86_64-linux-gnu) under #{Rackbench::BundleEnv.default_root}/gems/ruby-3.3.0?")
    assert_equal [["3.1.16"], [false]], [by.values.map { |t| t.identity.dig("gems", "rack") }.uniq,
                                        by.values.map { |t| t.identity["force_ruby_platform"] }.uniq]

    doc = report_json(results)
    assert_empty doc["gem_differences"], "no version differs"
    assert(doc["configs"].all? { |c| c["flags"].none? { |f| f["kind"] == "gems_differ" } }, "no g flag")
    assert_equal [{ "ffi" => "ruby" }, { "ffi" => "x86_64-linux-gnu" }, { "ffi" => "ruby" }],
                 doc["configs"].map { |c| c["gem_platforms"].slice("ffi") }
    assert_equal ["ffi 1.17.2: source on ruby, r34, x86_64-linux-gnu on r33",
                  "base64 0.2.0: in the bundle on r33, r34, not on ruby"], doc["gem_notes"].map { |n| n["text"] }
    assert_includes out, "Gems built or bundled otherwise (the same versions; notes, not flags):\n" \
                         "  native-ffi: ffi 1.17.2: source on ruby, r34, x86_64-linux-gnu on r33\n"
    refute_includes out, "Gems that differ between configurations"
  end

  it "compiles every native gem from source on every ruby with force_ruby_platform, and records it" do
    out, err, status, results = run_experiment("forced", rubies: ["ruby", r33], apps: apps("native-ffi", ffi: "1.17.3"),
                                                         extra: "gems: { force_ruby_platform: true, ffi: \"1.17.3\" }")
    assert_ran(out, err, status)
    assert_includes out, "Gems: every native gem compiled from its source on every ruby (force_ruby_platform)\n"
    refute_includes out, "as other platforms", "the set's platform on every ruby"
    by = trials(results)
    assert_checked(by)
    assert_equal({ "ruby" => ["1.17.3", "ruby"], "r33" => ["1.17.3", "ruby"] }, ffi_by_ruby(by),
                 "ffi compiled from its source gem on 3.3 too")
    by.each do |(_, ruby), trial|
      assert_equal [true, true], [trial.identity["force_ruby_platform"], trial.identity.dig("expected", "force_ruby_platform")],
                   "#{ruby}: Bundler's setting inside the server, and the environment's"
    end
    assert_equal [], report_json(results)["gem_notes"].select { |n| n["kind"] == "platform" }
  end

  it "refuses a set one ruby locks at another version, in one line naming the gem, both versions and what to do" do
    out, err, status, results = run_experiment("refused", rubies: ["ruby", r34], apps: apps("ruby-conditional"))
    refute status.success?, out
    line = err.lines.grep(/\Arackbench: /).last.to_s
    assert_match(/\Arackbench: cannot install the gem set of ruby-conditional \+ puma \(resolved on ruby \(ruby 3\.1\.\d+\S*\)\) on r34 \(ruby 3\.4\.5\): it locks rack 3\.1\.12 where the set has 3\.0\.9; to run one rack on every ruby, pin it to the set's version \(gems: \{ rack: "3\.0\.9" \}\); or let each ruby resolve its own \(gems: per_ruby\) \(log: \S+bundle-ruby-conditional-r34-puma\.log\)\n\z/,
                 line)
    assert_empty Rackbench::Store.open(results, &:trials), "no trial ran"
  end

  it "starts each ruby from the app's own lock with per_ruby, keeps every version it can, and names what it changed" do
    out, err, status, results = run_experiment("per-ruby", rubies: ["ruby", r33, r34],
                                                           apps: apps("native-ffi", "ruby-conditional"),
                                                           extra: "gems: per_ruby\nexclude: [{ app: native-ffi, ruby: r34 }, " \
                                                                  "{ app: ruby-conditional, ruby: r33 }]")
    assert_ran(out, err, status)
    assert_match(/^Gems: gems resolved by each ruby on its own \(gems: per_ruby\)$/, out)
    assert_includes out, "  native-ffi: r33 (ruby 3.3.8) runs the app's Gemfile.lock's versions as other platforms: " \
                         "ffi 1.17.2 x86_64-linux-gnu (the app's Gemfile.lock: source)\n"
    assert_includes out, "  ruby-conditional: r34 (ruby 3.4.5) changed the app's Gemfile.lock: rack 3.1.12 (locked: 3.0.9)\n"

    by = trials(results)
    assert_equal 4, by.size
    assert_checked(by)
    locked = Rackbench::BundleEnv::Lockfile.gem_versions(File.read(File.join(fixtures, "native-ffi", "Gemfile.lock")))
    %w[ruby r33].each do |ruby|
      assert_equal locked.except("bundler"), by[["native-ffi", ruby]].identity["gems"].slice("ffi", "rack"),
                   "#{ruby}: ffi 1.17.2 and rack 3.1.16 as the app's lock has them, though newer ones fit"
    end
    assert_equal({ "ruby" => "3.0.9", "r34" => "3.1.12" },
                 by.select { |(app, _), _| app == "ruby-conditional" }.to_h { |(_, ruby), t| [ruby, t.identity.dig("gems", "rack")] })
  end
end
