# frozen_string_literal: true

require "test_helper"
require "stringio"

describe Rackbench::Runner::Progress do
  ProgressTrial = Struct.new(:config, :batch)

  it "prints one line per trial with a bar and an ETA from the trials so far" do
    out = StringIO.new
    progress = Rackbench::Runner::Progress.new(out: out, total: 4, already_done: 1, live: false)
    progress.starting(ProgressTrial.new("ruby=ruby server=puma", 1))
    progress.finished("ok 100.0 req/s", 10.0)
    progress.starting(ProgressTrial.new("ruby=ruby server=webrick", 1))
    progress.finished("FAILED: boom", 20.0)
    lines = out.string.lines
    assert_equal "[█████░░░░░░░░░░░░░░░] 2/4 ruby=ruby server=puma batch 1 ... ok 100.0 req/s (10.0s; ETA 20s)\n", lines[0]
    assert_match(/\A\[██████████░{10}\] 3\/4 .* FAILED: boom \(20\.0s; ETA 15s\)\n\z/, lines[1])
    refute_includes out.string, "\r"
  end

  it "redraws the current line on a terminal and ends it cleanly" do
    before = Thread.list
    out = StringIO.new
    progress = Rackbench::Runner::Progress.new(out: out, total: 2, already_done: 0, estimated_trial_s: 8, live: true)
    progress.starting(ProgressTrial.new("ruby=ruby", 1))
    assert_match(/\r\e\[K\[░+\] 1\/2 ruby=ruby batch 1 \.\.\. 0s; ETA 16s/, out.string)
    progress.finished("ok", 1.0)
    assert out.string.end_with?("\r\e[K[░░░░░░░░░░░░░░░░░░░░] 1/2 ruby=ruby batch 1 ... ok (1.0s; ETA 1s)\n")
    progress.starting(ProgressTrial.new("ruby=ruby", 2))
    # The threads this progress started (the tests run one at a time, so
    # no other test starts one meanwhile).
    tickers = Thread.list - before
    refute_empty tickers.select(&:alive?), "a ticker redraws while a trial runs"
    progress.abort
    # Nothing may draw after abort: the ticker that draws is gone.
    assert(tickers.none?(&:alive?))
  end
end
