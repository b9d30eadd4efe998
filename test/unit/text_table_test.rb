# frozen_string_literal: true

require "test_helper"
require "stringio"

# Tables and lines that fit a width (Text::Table, Text::Wrap, Text::Width):
# within it figures stay whole, text wraps or is shortened in the middle,
# a table too wide continues below with its keys; without a width every
# cell is whole.
describe Rackbench::Text do
  def widths(text) = text.lines.map { |line| Rackbench::Text::Wrap.width(line.chomp) }

  PATH = "/root/.cache/rackbench/bundles/rack-hello-9ccba41a9cd839f0/bundle.log"

  describe Rackbench::Text::Table do
    def table(width, **options)
      Rackbench::Text::Table.new(headings: ["kind", "what", "size", "verdict"],
                                 rows: [["environment", PATH, "28.00 KB", "no difference detected (23416 batches)"],
                                        :separator, ["gems", "gems of ruby-3.1.0", "134.38 MB", "faster"]],
                                 right: [2], shrink: { 1 => :middle }, title: "The cache of this machine",
                                 width: width).to_s
    end

    it "fits the width: the path shortened in the middle, the verdict wrapped, the figures whole" do
      text = table(70)
      assert_operator widths(text).max, :<=, 70
      refute_includes text, "(continued)"
      assert_equal 1, text.lines.count { |line| line.include?("…") }, text
      path_line = text.lines.find { |line| line.include?("…") }
      assert_includes path_line, "| /root/.ca", "the path's start is kept"
      assert_includes path_line, "dle.log |", "the path's end is kept"
      assert_includes text, "28.00 KB"
      assert_includes text, "134.38 MB"
      assert_match(/\| no difference +\|/, text, "the verdict wraps within its cell")
      assert_includes text, "The cache of this machine"
    end

    it "gives every cell whole without a width, as --wide asks" do
      text = table(nil)
      assert_includes text, PATH
      assert_includes text, "no difference detected (23416 batches)"
      assert_operator widths(text).max, :>, 100
      refute_includes text, "…"
    end

    it "leaves a table that fits as it is" do
      assert_equal table(nil), table(1000)
    end

    it "continues a table too wide for its figures below, the key columns repeated" do
      headings = ["server", "threads", *(1..12).map { |i| "figure #{i}" }]
      rows = [["puma", "4", *(1..12).map { |i| "#{i * 1000}.5 req/s" }],
              ["webrick", "1", *(1..12).map { |i| "#{i * 10}.25 req/s" }]]
      text = Rackbench::Text::Table.new(headings: headings, rows: rows, right: (2..13).to_a, keys: 2, title: "wide",
                                        width: 80).to_s
      assert_operator widths(text).max, :<=, 80
      tables = text.split(/^(?=\+-+\+\n\| +wide)/)
      assert_operator tables.size, :>=, 3, text
      tables.each do |part|
        assert_match(/\| server +\| threads +\|/, part, "each table repeats the keys")
        assert_includes part, "webrick"
      end
      (1..12).each { |i| assert_includes text, "#{i * 1000}.5 req/s" }
      assert_equal tables.size - 1, text.scan("wide (continued)").size, "the tables after the first say so"
    end

    it "keeps a coloured cell's colour on every line it wraps to" do
      rows = [["\e[33mno difference detected, the interval spans one\e[0m", "1.000"]]
      text = Rackbench::Text::Table.new(headings: %w[verdict ratio], rows: rows, right: [1], width: 30).to_s
      coloured = text.lines.select { |line| line.include?("\e[33m") }
      assert_operator coloured.size, :>=, 2, text
      coloured.each { |line| assert_includes line, "\e[0m" }
      assert_operator widths(text).max, :<=, 30
    end
  end

  describe Rackbench::Text::Wrap do
    it "shortens in the middle, keeping both ends" do
      short = Rackbench::Text::Wrap.middle(PATH, 30).first
      assert_equal 30, Rackbench::Text::Wrap.width(short)
      assert short.start_with?("/root/.cache/")
      assert short.end_with?("bundle.log")
      assert_equal ["short"], Rackbench::Text::Wrap.middle("short", 30)
    end

    it "wraps prose with a hanging indent and leaves table lines alone" do
      long = "  puma · 1 · 1: batch 1: other processes used 96% of a CPU during the window: ruby3.1 (pid 28436) 29.0%"
      table_line = "| #{"x" * 120} |"
      text = Rackbench::Text::Wrap.prose("#{long}\n#{table_line}\n", 60)
      lines = text.lines.map(&:chomp)
      assert lines.first.start_with?("  puma · 1 · 1:")
      assert(lines[1...-1].all? { |line| line.start_with?("    ") && !line.start_with?("     ") }, text)
      assert_equal table_line, lines.last
      assert_equal long.split.join(" "), lines[0...-1].map(&:strip).join(" "), "no word lost"
      assert_equal "#{long}\n", Rackbench::Text::Wrap.prose("#{long}\n", nil)
    end

    it "cuts a word longer than the width" do
      assert_equal ["abcde", "fghij", "k"], Rackbench::Text::Wrap.lines("abcdefghijk", 5)
    end
  end

  describe Rackbench::Text::Width do
    let(:terminal) do
      Class.new(StringIO) do
        def tty? = true
        def winsize = [24, 132]
      end.new
    end

    it "takes the terminal's width, 100 columns elsewhere, and none with --wide" do
      assert_equal 132, Rackbench::Text::Width.for(terminal, env: {})
      assert_equal 100, Rackbench::Text::Width.for(StringIO.new, env: {})
      assert_equal 100, Rackbench::Text::Width.for(StringIO.new, env: { "COLUMNS" => "250" }), "never wider in a pipe"
      assert_equal 72, Rackbench::Text::Width.for(StringIO.new, env: { "COLUMNS" => "72" })
      assert_nil Rackbench::Text::Width.for(terminal, wide: true, env: {})
      assert_nil Rackbench::Text::Width.for(StringIO.new, wide: true, env: {})
    end
  end
end
