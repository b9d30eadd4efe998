# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../../lib/rackbench/micro/fibers_bench"

# The standalone benchmark script: its protocol and reactor in-process, the
# threads and fibers modes in-process (its command line, in a process of
# its own, is in test/integration/micro_fibers_bench_cli_test.rb). Tiny
# sizes: these check that every message is answered and checked, not speed.
describe Rackbench::Micro::FibersBench do
  bench = Rackbench::Micro::FibersBench
  protocol = bench::Protocol

  def options(mode, workers: 3, messages: 20, warmup: 1, work: 1)
    Rackbench::Micro::FibersBench::Options.new(mode, workers, messages, warmup, work)
  end


  describe "protocol" do
    it "has fixed-size frames that carry the sequence number" do
      assert_equal 64, protocol.message(7).bytesize
      assert protocol.message(7).start_with?("0000000007 ")
      assert protocol.message(7).end_with?("\n")
      reply = protocol.reply(protocol.message(7), 1)
      assert_equal 32, reply.bytesize
      assert_match(/\A0000000007 \d{10} +\n\z/, reply)
    end

    it "answers each message with a checksum that depends on every byte and on the work" do
      message = protocol.message(3)
      refute_equal protocol.checksum(message, 1), protocol.checksum(protocol.message(4), 1)
      refute_equal protocol.checksum(message, 1), protocol.checksum(message, 2)
      assert_equal protocol.checksum(message, 2), protocol.checksum(message, 2)
      assert_equal protocol::FNV_OFFSET, protocol.checksum(message, 0)
    end

    it "checks a reply against the table: wrong, short or missing replies are mismatches" do
      table = bench::Table.new(5, 1)
      table.check!(0, 4, protocol.reply(table.message(4), 1))
      error = assert_raises(bench::Mismatch) { table.check!(2, 4, protocol.reply(table.message(3), 1)) }
      assert_match(/worker 2: reply to message 4 is/, error.message)
      assert_raises(bench::Mismatch) { table.check!(0, 1, protocol.reply(table.message(1), 2)) }
      assert_raises(bench::Mismatch) { table.check!(0, 1, "0000000001") }
      assert_match(/worker 1 closed its reply pipe after 3 replies/,
                   assert_raises(bench::Mismatch) { table.check!(1, 3, nil) }.message)
    end
  end

  describe "reactor" do
    it "reassembles frames written in pieces and reports EOF" do
      reader, writer = IO.pipe
      reactor = bench::Reactor.new
      frames = []
      writer.write("abc")
      reactor.spawn { 2.times { frames << reactor.read_exactly(reader, 8) } } # reads "abc", then waits
      assert_empty frames
      writer.write("defgh1234")
      reactor.run_while { frames.empty? }
      writer.write("5678")
      writer.close
      reactor.run_while { frames.size < 2 }
      assert_equal %w[abcdefgh 12345678], frames
      assert_nil reactor.read_exactly(reader, 8)
    ensure
      [reader, writer].each { |io| io.close unless io.closed? }
    end

    it "raises at EOF in the middle of a frame" do
      reader, writer = IO.pipe
      writer.write("abc")
      writer.close
      error = assert_raises(bench::Mismatch) { bench::Reactor.new.read_exactly(reader, 8) }
      assert_match(/3 of 8 bytes/, error.message)
    ensure
      reader.close
    end

    it "writes more than a pipe holds, yielding until a reader fiber drains it" do
      reader, writer = IO.pipe
      reactor = bench::Reactor.new
      data = "x" * 300_000
      received = +""
      done = false
      reactor.spawn do
        reactor.write_all(writer, data)
        writer.close
      end
      reactor.spawn do
        while (chunk = reactor.read_exactly(reader, 1000))
          received << chunk
        end
        done = true
      end
      reactor.run_while { !done }
      assert_equal data.bytesize, received.bytesize
    ensure
      [reader, writer].each { |io| io.close unless io.closed? }
    end

    it "refuses to wait when no fiber waits for anything" do
      assert_raises(bench::Mismatch) { bench::Reactor.new.run_while { true } }
    end
  end

  it "catches a worker that answers without doing the work" do
    channels = bench::Channels.open(2)
    lazy = channels.map do |channel|
      Thread.new do
        while (frame = channel.request_reader.read(protocol::MESSAGE_BYTES))
          channel.reply_writer.write(protocol.reply(frame, 0)) # skips the checksum passes
        end
      end
    end
    error = assert_raises(bench::Mismatch) { bench::SelectMaster.round(channels, bench::Table.new(3, 1)) }
    assert_match(/reply to message 0/, error.message)
  ensure
    channels&.each { |channel| channel.request_writer.close } # EOF: the lazy workers end
    lazy&.each { |t| t.join(5) }
    channels&.close_all
  end

  %w[threads fibers].each do |mode|
    it "runs #{mode} in-process, checking every reply of every worker" do
      result = bench.run(options(mode, workers: 4, messages: 25))
      assert_equal "ok", result["status"], result["reason"]
      assert_equal 100, result["replies_checked"]
      assert_equal 100, result["messages"]
      assert_equal 1, result["processes"]
      assert_operator result["messages_per_s"], :>, 0
    end
  end

  it "leaves no thread behind after a threads run" do
    before = Thread.list.size
    bench.run(options("threads", workers: 5, messages: 3))
    assert_equal before, Thread.list.size
  end
end
