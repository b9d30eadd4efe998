# frozen_string_literal: true

require "test_helper"
require "rackbench/cli"

# `rackbench bisect`'s command line before it reaches git: its help, and
# every option it refuses, each in one line with exit 2 (usage), before
# anything is read from a repository or written. What it does over a
# history (git, worktrees, runs) is test/integration/bisect_driver_test.rb.
describe "rackbench bisect (command line)" do
  let(:dir) { Dir.mktmpdir("rackbench-bisect-cli") }
  let(:file) do
    FileUtils.mkdir_p(File.join(dir, "app"))
    File.write(File.join(dir, "app", "config.ru"), "run ->(_env) { [200, {}, [\"Hello\"]] }\n")
    File.join(dir, "bisect.yml").tap do |path|
      File.write(path, "name: page\nservers: [puma]\napps:\n  - { name: app, path: app }\n")
    end
  end

  after { FileUtils.rm_rf(dir) }

  it "says what it takes with --help" do
    code, out, = cli("bisect", "--help")
    assert_equal Rackbench::CLI::EXIT_OK, code
    assert_match(/\AUsage: rackbench bisect \[options\] EXPERIMENT.yml --good REF --bad REF$/, out)
    %w[--good --bad --over --measure --threshold --min-step --min-batches --max-batches --confidence --results --store
       --resume --dry-run --wide --json --markdown].each { |option| assert_match(/^ +#{option}\b/, out) }
    assert_match(/rps, p50, p90, p99, p99\.9, cpu, allocations, memory, instructions, cycles/, out.gsub(/\s+/, " "))
  end

  it "refuses, in one line each and before reading any repository, what it cannot run" do
    results = File.join(dir, "results")
    good_bad = ["--good", "v1", "--bad", "main", "--results", results]
    {
      [*good_bad] => /\Abisect takes one experiment file/,
      [file, file, *good_bad] => /\Abisect takes one experiment file/,
      [file, "--good", "v1", "--results", results] => /\Abisect needs --good REF and --bad REF/,
      [file, *good_bad, "--threshold", "much"] => /\A--threshold takes a percentage such as 1%/,
      [file, *good_bad, "--threshold", "0%"] => /\A--threshold takes a percentage above 0% and below 100%/,
      [file, *good_bad, "--threshold", "1%", "--min-step", "2%"] => /\A--min-step \(2%\) cannot exceed --threshold \(1%\)/,
      [file, *good_bad, "--min-batches", "1"] => /\A--min-batches must be an integer >= 2, got 1/,
      [file, *good_bad, "--min-batches", "4", "--max-batches", "3"] => /\A--max-batches must be an integer >= --min-batches \(4\)/,
      [file, *good_bad, "--confidence", "20%"] => /\A--confidence must be between 50% and 99\.99%/,
      [file, *good_bad, "--over", "server"] => /\A--over takes ruby or app, or ruby=NAME or app=NAME for one entry, got 'server'/,
      [file, *good_bad, "--measure", "speed"] => /\Aunknown figure 'speed' \(figures: rps, /,
      [File.join(dir, "none.yml"), *good_bad] => /none\.yml/
    }.each do |args, message|
      code, out, err = cli("bisect", *args)
      assert_equal Rackbench::CLI::EXIT_USAGE, code, "#{args.inspect}: #{err}"
      assert_match(message, err.delete_prefix("rackbench: "), args.inspect)
      assert_equal 1, err.lines.size, err
      assert_empty out
    end
    refute File.exist?(results), "nothing written"
  end
end
