# frozen_string_literal: true

require "test_helper"
require "stringio"

# `rackbench micro` up to the point where it would run anything: help and
# the one-line errors. Runs end to end are in test/integration/micro_test.rb.
describe "rackbench micro (command line)" do
  def micro(*argv) = cli("micro", *argv)

  it "prints its help with the benchmarks and options" do
    code, out, = micro("--help")
    assert_equal 0, code
    assert_match(/Usage: rackbench micro BENCHMARK/, out)
    assert_match(/fibers +threads, forked processes and fibers/, out)
    %w[--ruby --modes --workers --messages --total-messages --warmup --batches --seed --timeout --cpus --results
       --resume --json].each { |option| assert_includes out, option }
  end

  it "rejects bad input with one line and status 2" do
    [
      [[], /micro needs a benchmark name \(fibers\)/],
      [%w[sockets], /unknown micro-benchmark 'sockets' \(available: fibers\)/],
      [%w[fibers a.yml b.yml], /at most one experiment file/],
      [%w[fibers --workers 0], /--workers: "0" is not an integer/],
      [%w[fibers --modes threads,green], /unknown mode "green"/],
      [%w[fibers --bogus], /invalid option: --bogus/],
      [%w[fibers /nonexistent/exp.yml], /experiment file not found: \/nonexistent\/exp.yml/]
    ].each do |argv, pattern|
      code, out, err = micro(*argv)
      assert_equal 2, code, argv.inspect
      assert_equal "", out
      assert_equal 1, err.lines.size, err
      assert_match pattern, err
    end
  end
end
