# frozen_string_literal: true

require "test_helper"
require "rackbench/bisect"

# What a bisection is asked (Settings) and the experiments it runs for an
# app (Derivation): each commit's own file, as Experiment#derive writes it.
# A ruby's (whose build.ref git resolves when the file is read) is
# test/integration/bisect_subject_test.rb.
describe Rackbench::Bisect::Derivation do
  let(:dir) { Dir.mktmpdir("rackbench-bisect-derive") }
  let(:sha) { "1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e" }
  let(:parent) { "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567" }

  after { FileUtils.rm_rf(dir) }

  def settings(**options)
    Rackbench::Bisect::Settings.build(good: "v1", bad: "main", default_measure: "instructions", **options)
  end

  def app_dir(name)
    File.join(dir, name).tap do |path|
      FileUtils.mkdir_p(path)
      File.write(File.join(path, "config.ru"), "run ->(_) { [200, {}, []] }\n")
    end
  end

  describe "of an app" do
    let(:experiment) do
      app_dir("myapp")
      Rackbench::Experiment.parse(<<~YAML, source: "app.yml", base_dir: dir)
        name: page
        servers: [puma]
        apps:
          - { name: myapp, path: myapp, health: /up, expect_body: Posts }
          - rack-hello
        measure: [time, instructions]
        load: { count: 300 }
      YAML
    end
    let(:subject_) { Rackbench::Bisect::Subject.new(kind: "app", name: "myapp", repository: dir, subdir: "myapp") }

    it "runs the app from the commit's directory, keeping its settings and the file's count" do
      trees = []
      derivation = Rackbench::Bisect::Derivation.new(experiment: experiment, subject: subject_, settings: settings,
                                                     app_dir: ->(commit) { trees << commit; app_dir("tree-#{commit[0, 4]}") })
      step = derivation.commit_experiment(sha)
      assert_equal [sha], trees
      app = step.apps.first
      assert_equal [["myapp"], File.join(dir, "tree-1f2e"), "/up", "Posts"],
                   [step.apps.map(&:name), app.path, app.health, app.expect_body]
      assert_equal [["instructions"], 300], [step.measure, step.configurations.first.load[:count]]
    end

    it "names the commit when the file does not hold there" do
      derivation = Rackbench::Bisect::Derivation.new(experiment: experiment, subject: subject_, settings: settings,
                                                     app_dir: ->(_commit) { File.join(dir, "empty").tap { |d| FileUtils.mkdir_p(d) } })
      error = assert_raises(Rackbench::ConfigError) { derivation.commit_experiment(sha) }
      assert_match(/\Aat 1f2e3d4c5b: .*apps\[0\]\.path: .* has no config\.ru/, error.message)
    end
  end
end

describe Rackbench::Bisect::Settings do
  def build(**options)
    Rackbench::Bisect::Settings.build(good: "v1", bad: "main", default_measure: "instructions", **options)
  end

  it "defaults to a 1% threshold, steps of half of it, 5 to 10 batches" do
    s = build
    assert_equal ["instructions", 0.01, 0.005, 5, 10, 0.95], [s.figure.name, s.threshold, s.min_step, s.min_batches,
                                                             s.max_batches, s.confidence]
    assert_equal "instructions", s.measure
    assert_equal "time", build(measure: "p99").measure
    assert_equal 0.02, s.rule(0.02).limit
  end

  it "refuses what it cannot use, in one line naming the option" do
    {
      { good: "" } => /bisect needs --good REF and --bad REF/,
      { measure: "speed" } => /unknown figure 'speed'/,
      { threshold: 0.0 } => /--threshold takes a percentage above 0%/,
      { threshold: 0.01, min_step: 0.02 } => /--min-step \(2%\) cannot exceed --threshold \(1%\)/,
      { min_batches: 1 } => /--min-batches must be an integer >= 2/,
      { min_batches: 5, max_batches: 4 } => /--max-batches must be an integer >= --min-batches \(5\)/,
      { over: "rubies" } => /--over takes ruby or app, or ruby=NAME or app=NAME/
    }.each do |options, message|
      error = assert_raises(Rackbench::UsageError) { Rackbench::Bisect::Settings.build(good: "v1", bad: "main", default_measure: "rps", **options) }
      assert_match(message, error.message)
    end
    assert_equal %w[app myapp], Rackbench::Bisect::Settings.over_parts("app=myapp")
    assert_equal ["ruby", nil], Rackbench::Bisect::Settings.over_parts("ruby")
  end
end
