# frozen_string_literal: true

require "test_helper"
require_relative "../file_times"

# The lanes' order and groups from measured times (the Rakefile's tiers).
describe FileTimes do
  let(:times) { FileTimes.new("unit" => { "a.rb" => 9.0, "b.rb" => 5.0, "c.rb" => 4.0, "d.rb" => 1.0 }) }

  it "starts the longest first, a file it never measured at the median (names break ties)" do
    assert_equal %w[a.rb b.rb new.rb c.rb d.rb], times.longest_first("unit", %w[d.rb c.rb new.rb b.rb a.rb])
  end

  it "splits files into groups of about equal time, each to the group with the least so far" do
    assert_equal [%w[a.rb d.rb], %w[b.rb c.rb]], times.groups("unit", %w[a.rb b.rb c.rb d.rb], 2)
    assert_equal [%w[a.rb b.rb c.rb d.rb]], times.groups("unit", %w[a.rb b.rb c.rb d.rb], 1)
    assert_equal [%w[a.rb]], times.groups("unit", %w[a.rb], 3), "no empty group"
  end

  it "keeps the last run's tier over the committed one, and the other tiers as they were" do
    Dir.mktmpdir do |dir|
      committed = File.join(dir, "committed.json")
      last = File.join(dir, "last.json")
      File.write(committed, JSON.generate("unit" => { "a.rb" => 1.0 }, "integration" => { "x.rb" => 2.0 }))
      loaded = FileTimes.load(committed: committed, last_run: last)
      assert_equal [1.0, 2.0], [loaded["unit", "a.rb"], loaded["integration", "x.rb"]]
      loaded.record("unit", { "test/unit/b.rb" => 3.456 }, path: last)
      reloaded = FileTimes.load(committed: committed, last_run: last)
      assert_equal [nil, 3.46, 2.0], [reloaded["unit", "a.rb"], reloaded["unit", "test/unit/b.rb"],
                                      reloaded["integration", "x.rb"]]
    end
  end
end
