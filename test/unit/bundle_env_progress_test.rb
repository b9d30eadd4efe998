# frozen_string_literal: true

require "test_helper"
require "stringio"
require "rackbench/bundle_env"

# Progress during a `bundle install`, from a fake Bundler output stream and
# a fake clock: what it counts, how often it speaks, how it ends, and that
# only a terminal gets a line redrawn in place.
describe Rackbench::BundleEnv::Progress do
  Progress = Rackbench::BundleEnv::Progress

  # A first install as Bundler 2.3 prints it, one line per second.
  BUNDLER_OUTPUT = [
    "Fetching gem metadata from https://rubygems.org/.........",
    "Resolving dependencies...",
    "Using bundler 2.3.15",
    "Using rake 13.2.1",
    "Fetching concurrent-ruby 1.3.4",
    "Installing concurrent-ruby 1.3.4",
    "Fetching nokogiri 1.16.0 (x86_64-linux)",
    "Installing nokogiri 1.16.0 (x86_64-linux)",
    "Fetching bcrypt 3.1.20",
    "Installing bcrypt 3.1.20 with native extensions",
    "Using rack 3.1.8",
    "Fetching puma 6.6.1",
    "Installing puma 6.6.1 with native extensions",
    "Bundle complete! 5 Gemfile dependencies, 7 gems now installed."
  ].freeze

  before do
    @now = 100.0
    @out = StringIO.new
  end

  def progress(tty: false, interval_s: 5.0)
    Progress.new(out: @out, label: "app + puma on ruby", tty: tty, interval_s: interval_s, clock: -> { @now })
  end

  def feed(progress, lines, step_s: 1.0)
    lines.each do |line|
      @now += step_s
      progress.line(line)
    end
  end

  it "says which gem of how many it is at, at most once per interval, and ends with the duration" do
    p = progress
    p.start(total: 7)
    feed(p, BUNDLER_OUTPUT)
    @now += 60
    p.finish(ok: true)
    assert_equal ["app + puma on ruby: gem 2 of about 7 (fetching concurrent-ruby 1.3.4), 5 s",
                  "app + puma on ruby: gem 5 of about 7 (installing bcrypt 3.1.20, native extensions), 10 s",
                  "app + puma on ruby: 7 gems ready in 1m14s (4 installed, 3 already there)"], @out.string.lines.map(&:chomp)
  end

  it "counts without a total when the lockfile did not say, and never shows fewer than done" do
    p = progress(interval_s: 3.0)
    p.start(total: nil)
    feed(p, BUNDLER_OUTPUT.first(6))
    assert_equal ["app + puma on ruby: gem 1, 3 s",
                  "app + puma on ruby: gem 3 (installing concurrent-ruby 1.3.4), 6 s"], @out.string.lines.map(&:chomp)

    @out = StringIO.new
    p = progress(interval_s: 1.0)
    p.start(total: 2)
    feed(p, BUNDLER_OUTPUT.first(6))
    assert_includes @out.string, "gem 3 of about 3"
  end

  it "prints only the final line for an install quicker than the interval" do
    p = progress
    p.start(total: 7)
    feed(p, BUNDLER_OUTPUT, step_s: 0.1)
    p.finish(ok: true)
    assert_equal ["app + puma on ruby: 7 gems ready in 1 s (4 installed, 3 already there)"], @out.string.lines.map(&:chomp)
  end

  it "says how far a failed install got" do
    p = progress
    p.start(total: 7)
    feed(p, BUNDLER_OUTPUT.first(8), step_s: 0.5)
    p.finish(ok: false)
    assert_equal "app + puma on ruby: install failed after 4 s, at gem 4 of about 7\n", @out.string
  end

  it "redraws one line in place on a terminal, and ends it with a newline" do
    p = progress(tty: true, interval_s: 2.0)
    p.start(total: 7)
    feed(p, BUNDLER_OUTPUT.first(4))
    p.finish(ok: true)
    assert_equal "\rapp + puma on ruby: gem 1 of about 7, 3 s\e[K" \
                 "\rapp + puma on ruby: 2 gems ready in 4 s (0 installed, 2 already there)\e[K\n", @out.string
  end

  it "writes no carriage return anywhere else" do
    p = progress(interval_s: 1.0)
    p.start(total: 7)
    feed(p, BUNDLER_OUTPUT)
    p.finish(ok: true)
    refute_includes @out.string, "\r"
    refute_includes @out.string, "\e["
    assert_equal 12, @out.string.lines.size, "one line per update, then the final one"
  end

  it "follows a log as Bundler appends to it, lines split across reads included" do
    Dir.mktmpdir do |dir|
      log = File.join(dir, "bundle.log")
      File.write(log, "== earlier install\nInstalling old 1.0\n")
      p = Progress.new(out: @out, label: "app", interval_s: 1000)
      p.start(total: nil)
      value = p.follow(log) do
        File.open(log, "a") do |f|
          f.write("Using rack 3.1.8\nInstall")
          f.flush
          wait_until(message: "the first line read") { p.done == 1 }
          f.write("ing puma 6.6.1 with native extensions\nUsing nio4r 2.7.4")
        end
        :bundler_result
      end
      assert_equal :bundler_result, value
      assert_equal 3, p.done, "rack, puma and the last line without its newline; not the earlier install"
      assert_equal 1, p.installed
    end
  end
end
