# frozen_string_literal: true

require "test_helper"
require "tmpdir"

# The bundled gems a source lacks, taken from the build cache's copies
# before RubyGems is asked (a bisection builds commit after commit of one
# source). Every case here has all it needs kept, so no command runs.
describe "a build's bundled gems kept across builds" do
  BundledGems = Rackbench::Rubies::Build::BundledGems

  def source(dir, lines)
    FileUtils.mkdir_p(File.join(dir, "gems"))
    File.write(File.join(dir, "gems", "bundled_gems"), lines)
    dir
  end

  it "copies every listed gem the cache keeps and fetches none" do
    Dir.mktmpdir do |tmp|
      src = source(File.join(tmp, "src"), "# name version repository\nminitest 5.25.4 https://x\nrake 13.2.1 https://y\n")
      kept = File.join(tmp, "kept")
      FileUtils.mkdir_p(kept)
      File.write(File.join(kept, "minitest-5.25.4.gem"), "m")
      File.write(File.join(kept, "rake-13.2.1.gem"), "r")
      File.write(File.join(kept, "rake-13.1.0.gem"), "an older rake, not listed")
      log = File.join(tmp, "log")

      fetched = BundledGems.fetch(src, log: log, env: {}, ruby: "dev", kept_in: kept)

      assert_equal 0, fetched
      assert_empty BundledGems.missing(src)
      assert_equal "r", File.read(File.join(src, "gems", "rake-13.2.1.gem"))
      refute File.exist?(File.join(src, "gems", "rake-13.1.0.gem"))
      assert_includes File.read(log), "2 bundled gem(s) copied from #{kept}"
    end
  end

  it "leaves a gem the source already carries as it is, and copies only what is missing" do
    Dir.mktmpdir do |tmp|
      src = source(File.join(tmp, "src"), "minitest 5.25.4\nrake 13.2.1\n")
      File.write(File.join(src, "gems", "minitest-5.25.4.gem"), "the tarball's own")
      kept = File.join(tmp, "kept")
      FileUtils.mkdir_p(kept)
      File.write(File.join(kept, "minitest-5.25.4.gem"), "kept")
      File.write(File.join(kept, "rake-13.2.1.gem"), "r")

      assert_equal 1, BundledGems.copy_kept(src, kept)
      assert_equal "the tarball's own", File.read(File.join(src, "gems", "minitest-5.25.4.gem"))
    end
  end

  it "keeps what a build fetched for the next one, never over a kept file" do
    Dir.mktmpdir do |tmp|
      src = source(File.join(tmp, "src"), "minitest 5.25.4\nrake 13.2.1\n")
      File.write(File.join(src, "gems", "minitest-5.25.4.gem"), "fetched")
      File.write(File.join(src, "gems", "rake-13.2.1.gem"), "fetched rake")
      kept = File.join(tmp, "kept")
      FileUtils.mkdir_p(kept)
      File.write(File.join(kept, "rake-13.2.1.gem"), "kept before")

      BundledGems.keep(src, [%w[minitest 5.25.4], %w[rake 13.2.1]], kept)

      assert_equal "fetched", File.read(File.join(kept, "minitest-5.25.4.gem"))
      assert_equal "kept before", File.read(File.join(kept, "rake-13.2.1.gem"))
      assert_equal %w[minitest-5.25.4.gem rake-13.2.1.gem], Dir.children(kept).sort
    end
  end

  it "fetches nothing and copies nothing when the source carries every gem" do
    Dir.mktmpdir do |tmp|
      src = source(File.join(tmp, "src"), "rake 13.2.1\n")
      File.write(File.join(src, "gems", "rake-13.2.1.gem"), "own")
      log = File.join(tmp, "log")

      assert_equal 0, BundledGems.fetch(src, log: log, env: {}, ruby: "dev", kept_in: File.join(tmp, "none"))
      refute File.exist?(log)
    end
  end
end
