# frozen_string_literal: true

require "test_helper"
require "stringio"

describe Rackbench::Runner::Progress do
  ProgressTrial = Struct.new(:config, :batch)
  PROGRESS_GUESS = Rackbench::Runner::Estimate::Guess

  it "prints one line per trial with a bar and the ETA it is given, saying when it is a guess" do
    out = StringIO.new
    progress = Rackbench::Runner::Progress.new(out: out, total: 4, already_done: 1, live: false)
    progress.starting(ProgressTrial.new("ruby=ruby server=puma", 1), eta: PROGRESS_GUESS.new(30.0, :plan, "guessed: x"))
    progress.finished("ok 100.0 req/s", 10.0, eta: PROGRESS_GUESS.new(20.0, :measured, nil))
    progress.starting(ProgressTrial.new("ruby=ruby server=webrick", 1))
    progress.finished("FAILED: boom", 20.0, eta: PROGRESS_GUESS.new(15.0, :run, "guessed from other configurations' boot and stop"))
    progress.starting(ProgressTrial.new("ruby=ruby server=webrick", 2))
    progress.finished("ok 1.0 req/s", 1.0, eta: PROGRESS_GUESS.new(0.0, :measured, nil))
    lines = out.string.lines
    assert_equal "[█████░░░░░░░░░░░░░░░] 2/4 ruby=ruby server=puma batch 1 ... ok 100.0 req/s (10.0s; ETA 20s)\n", lines[0]
    assert_match(/\A\[██████████░{10}\] 3\/4 .* FAILED: boom \(20\.0s; ETA ~15s, guessed from other configurations' boot and stop\)\n\z/,
                 lines[1])
    assert_match(/ 4\/4 .* ok 1\.0 req\/s \(1\.0s; done\)\n\z/, lines[2])
    refute_includes out.string, "\r"
  end

  it "redraws the current line on a terminal and ends it cleanly" do
    before = Thread.list
    out = StringIO.new
    progress = Rackbench::Runner::Progress.new(out: out, total: 2, already_done: 0, live: true)
    progress.starting(ProgressTrial.new("ruby=ruby", 1), eta: PROGRESS_GUESS.new(16.0, :plan, "guessed: warmup + duration + ~3s per trial"))
    assert_match(/\r\e\[K\[░+\] 1\/2 ruby=ruby batch 1 \.\.\. 0s; ETA ~16s, guessed: warmup \+ duration \+ ~3s per trial/,
                 out.string)
    progress.finished("ok", 1.0, eta: PROGRESS_GUESS.new(1.0, :measured, nil))
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
