# frozen_string_literal: true

require "test_helper"
require "json"
require "rbconfig"
require "rss"
require "shellwords"
require "stringio"
require "support/publish_runs"

# `rackbench publish --on-regression CMD`: the command runs once per new
# regression with its document on standard input, is tried again at the
# next publish after a failure, and is stopped when it takes too long.
describe "rackbench publish --on-regression" do
  let(:root) { Dir.mktmpdir("rackbench-regressions") }
  let(:results) { File.join(root, "results") }
  let(:site) { File.join(root, "site") }
  after { FileUtils.rm_rf(root) }

  # Runs 0-5, the 1-thread configuration 10% slower from run 3.
  before { PublishRuns.six_runs(results) }

  include PublishRuns::Cli

  def publish(*argv) = cli("publish", "--results", results, "--out", site, *argv)

  let(:log) { File.join(root, "announced") }

  # A command that keeps what it was given, or fails with +exit+.
  def command(exit_code: 0)
    script = "File.write(ARGV[0] + \"-\" + Time.now.to_f.to_s, $stdin.read); exit #{exit_code}"
    [RbConfig.ruby, "-e", script, log].shelljoin
  end

  it "runs the command once per new regression, its document on standard input" do
    code, out, err = publish("--on-regression", command, "--url", "https://bench.example.org")
    assert_equal 0, code, err
    assert_match(/announced: regression #1/, out)
    given = Dir["#{log}-*"].map { |f| JSON.parse(File.read(f)) }
    assert_equal [[1, "confirmed", "https://bench.example.org/regressions/1.html"]], given.map { |d| d.values_at("id", "state", "url") }
    assert_equal [{ "of" => "app", "name" => "own", "good" => PublishRuns.commit(2), "bad" => PublishRuns.commit(3) }],
                 given.first["range"]["revisions"]

    Rackbench::Store.open(results) { |store| PublishRuns.store(store, 6, rps: [900.0, 4000.0]) }
    publish("--on-regression", command)
    assert_equal 1, Dir["#{log}-*"].size, "announced once"
  end

  it "tries again at the next publish when the command failed, and says so" do
    code, _, err = publish("--on-regression", command(exit_code: 3))
    assert_equal 1, code
    assert_match(/announcement failed: regression #1: .* exited with 3 \(tried again at the next publish\)/, err)
    code, = publish("--on-regression", command)
    assert_equal 0, code
    assert_equal 2, Dir["#{log}-*"].size
    assert_equal 0, publish("--on-regression", command)[0]
    assert_equal 2, Dir["#{log}-*"].size, "announced once it succeeded, and no more"
  end

  it "stops a command that takes too long, and one that cannot start" do
    sleeper = [RbConfig.ruby, "-e", "sleep 30"].shelljoin
    code, _, err = publish("--on-regression", sleeper, "--on-regression-timeout", "1")
    assert_equal 1, code
    assert_match(/did not finish within 1 s/, err)
    code, _, err = publish("--on-regression", File.join(root, "no-such-command"))
    assert_equal 1, code
    assert_match(/cannot run .*no-such-command: No such file or directory/, err)
    assert_equal 2, publish("--on-regression", "'unclosed")[0]
  end
end
