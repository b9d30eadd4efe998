# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../file_lanes"

# The integration tier's runner: every file runs once, in its own ruby, a
# failure fails the run, and each file's output is printed whole.
describe FileLanes do
  before do
    @dir = Dir.mktmpdir("rackbench-lanes")
    @files = { "a_test.rb" => "puts 'a1'; $stdout.flush; puts 'a2'", "b_test.rb" => "puts 'b'; exit 1",
               "c_test.rb" => "puts ARGV.join(',')" }.map do |name, code|
      File.join(@dir, name).tap { |path| File.write(path, code) }
    end
  end

  after { FileUtils.rm_rf(@dir) }

  it "runs each file once in its own process, passing the test arguments, and tells failures apart" do
    out = StringIO.new
    outcomes = FileLanes.new(files: @files, lanes: 2, ruby_args: [], test_args: %w[-v --seed 1], out: out).run
    assert_equal @files.sort, outcomes.map(&:path).sort
    assert_equal({ "a_test.rb" => true, "b_test.rb" => false, "c_test.rb" => true },
                 outcomes.to_h { |o| [File.basename(o.path), o.passed] })
    assert_equal "-v,--seed,1\n", outcomes.find { |o| o.path.end_with?("c_test.rb") }.output
    text = out.string
    assert_match(/^== .*a_test\.rb \([\d.]+ s, passed\)\na1\na2\n/, text, "a file's lines stay together")
    assert_match(/b_test\.rb \([\d.]+ s, FAILED\)/, text)
    assert_match(/== 3 files in 2 lane\(s\), slowest first:/, text)
    assert_match(/== FAILED: .*b_test\.rb\z/, text.strip)
  end

  it "runs a group of files in one ruby, minitest's arguments after them, with the lane's variables" do
    group = [File.join(@dir, "g1.rb"), File.join(@dir, "g2.rb")]
    File.write(group[0], 'puts "g1 #{ENV["LANE_FILE"]}"')
    File.write(group[1], 'puts "g2 #{ARGV.join(",")}"')
    out = StringIO.new
    outcomes = FileLanes.new(groups: [group, [@files[0]]], lanes: 2, ruby_args: [], test_args: %w[-v],
                             env: { "LANE_FILE" => "times-{lane}.json" }, out: out).run
    assert_equal ["group 1 (2 files)", "group 2 (1 files)"], outcomes.map(&:path).sort
    assert_equal "g1 times-0.json\ng2 -v\n", outcomes.find { |o| o.files == group }.output
    assert_match(/== all 2 groups passed/, out.string)
  end

  it "refuses a lane count below one" do
    assert_raises(ArgumentError) { FileLanes.new(files: @files, lanes: 0, ruby_args: []) }
  end
end
