# frozen_string_literal: true

require "test_helper"
require "rackbench/bisect"

# What a bisection says it will take before it starts (Cost).
describe Rackbench::Bisect::Cost do
  let(:dir) { Dir.mktmpdir("rackbench-bisect-cost") }
  let(:experiment) do
    FileUtils.mkdir_p(File.join(dir, "app"))
    File.write(File.join(dir, "app", "config.ru"), "run nil\n")
    Rackbench::Experiment.parse(<<~YAML, source: "cost.yml", base_dir: dir)
      name: page
      servers: [puma, webrick]
      apps: [{ name: app, path: app }, rack-hello]
      load: { count: 200, warmup: 2s }
    YAML
  end

  after { FileUtils.rm_rf(dir) }

  def history(size)
    commits = (0...size).map do |i|
      Rackbench::Bisect::History::Commit.new(sha: format("%02x", i + 1) * 20, parent: format("%02x", i) * 20, author: "A",
                                             author_date: "2026-01-01T00:00:00+00:00", subject: "Commit #{i}")
    end
    Rackbench::Bisect::History.new(nil, commits)
  end

  def settings(**options)
    Rackbench::Bisect::Settings.build(good: "v1", bad: "main", default_measure: "instructions", **options)
  end

  def cost(kind: "app", size: 25, pilot: [], build_s: nil, **options)
    subject = Rackbench::Bisect::Subject.new(kind: kind, name: kind == "app" ? "app" : "dev", repository: dir, subdir: "")
    Rackbench::Bisect::Cost.new(history: history(size), settings: settings(**options), subject: subject,
                                experiment: experiment, pilot: pilot, build_s: build_s)
  end

  it "expects the two ends and about log2 N splits, each commit's configurations in each batch" do
    c = cost
    assert_equal [24, 5, 7, 2], [c.commits, c.splits, c.measured, c.trials_per_batch]
    # The plan's guess under valgrind: (2 s warmup + 200 x 1 ms + 3 s) x 10.
    assert_in_delta 52.0, c.trial_s
    lines = c.lines
    assert_equal "Bisect page: app 'app' (#{dir}), 24 commits from 0101010101 (good: Commit 0) to 1919191919 (bad: Commit 24)",
                 lines[0]
    assert_match(/\A  about 7 commits measured \(the 2 ends and about log2 24 = 5 between\) and a confirmation run of 2 commits per step found: 5 batches of 2 trials per commit, about 52s a trial \(guessed; the good commit's trials will tell\); about 1h 19m in all\z/, lines[2])
    assert_equal [1, 0], [cost(size: 2).measured - 1, cost(size: 2).splits]
  end

  it "times a trial by the good commit's stored trials once it is measured, and a build by the last one here" do
    pilot = [Rackbench::Trial::Record.new(key: "a", kind: "http", status: "ok", wall_s: 20.0),
             Rackbench::Trial::Record.new(key: "b", kind: "http", status: "ok", wall_s: 30.0),
             Rackbench::Trial::Record.new(key: "c", kind: "http", status: "failed", reason: "boom", wall_s: 1.0)]
    c = cost(kind: "ruby", pilot: pilot, build_s: 240.0, measure: "rps")
    assert_in_delta 25.0, c.trial_s
    # The file has no ruby 'dev': one trial a batch. 7 commits x (a build, a
    # run's start, 5 batches x 25 s), and the confirmation's 2 x 5 trials.
    assert_in_delta 7 * (240 + 10 + 125) + 10 + 250, c.total_s
    assert_in_delta 5 * (240 + 10 + 125) + 10 + 250, c.remaining_s
    assert_match(/: 7 builds \(about 4m 00s each: the last build here; ccache makes a rebuild of a few changed files shorter\), 5 batches of 1 trial per commit, about 25s a trial \(the good commit's 2 trials\)/, c.lines[2])
  end
end
