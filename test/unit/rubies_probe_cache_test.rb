# frozen_string_literal: true

require "test_helper"

# The probe cache keeps what a probe found only while the files it was read
# from, the probe script and the environment are unchanged.
describe Rackbench::Rubies::ProbeCache do
  let(:dir) { Dir.mktmpdir("rackbench-probe-cache") }
  let(:cache_path) { File.join(dir, "cache", "rubies.json") }
  let(:ruby_file) { File.join(dir, "ruby").tap { |path| File.write(path, "#!/bin/sh\n") } }
  let(:candidate) { Rackbench::Rubies::Locator::Candidate.new(path: ruby_file, source: :path, command: "ruby") }
  let(:probes) { [] }

  after { FileUtils.rm_rf(dir) }

  def install(path: ruby_file, **fields)
    Rackbench::Rubies::Install.new(name: "ruby", path: path, source: :path, exe: path, engine: "ruby",
                                   version: "3.1.2", jit: ["yjit"], **fields)
  end

  def cache(env = { "PATH" => "/usr/bin" })
    Rackbench::Rubies::ProbeCache.from_env(env.merge("RACKBENCH_PROBE_CACHE" => cache_path))
  end

  # What discover does: fetch through the cache, then save.
  def discover(result = install, env: { "PATH" => "/usr/bin" })
    c = cache(env)
    found = c.fetch(candidate) { probes << candidate.path; result }
    c.save
    found
  end

  it "is off without the variable" do
    assert_nil Rackbench::Rubies::ProbeCache.from_env({ "PATH" => "/usr/bin" })
    assert_nil Rackbench::Rubies::ProbeCache.from_env({ "RACKBENCH_PROBE_CACHE" => "" })
  end

  it "probes once, then gives back the same Install while nothing changed" do
    first = discover
    second = discover
    assert_equal 1, probes.size
    assert_equal first, second
    assert_equal :path, second.source
  end

  it "probes again when the ruby's file changes" do
    discover
    File.write(ruby_file, "#!/bin/sh\n# upgraded\n")
    discover
    assert_equal 2, probes.size
  end

  it "probes again when a file the probe named is gone" do
    lib = File.join(dir, "libruby.so").tap { |path| File.write(path, "x") }
    discover(install(libruby: lib))
    File.delete(lib)
    discover(install)
    assert_equal 2, probes.size
  end

  it "probes again in another environment" do
    discover
    discover(env: { "PATH" => "/usr/bin", "JAVA_HOME" => "/elsewhere" })
    assert_equal 2, probes.size
  end

  it "keeps neither a broken ruby nor a shim (what runs is not the file found)" do
    broken = Rackbench::Rubies::Install.new(name: "ruby", path: ruby_file, source: :path, error: "exited with status 1")
    2.times { discover(broken) }
    real = File.join(dir, "ruby-3.3").tap { |path| File.write(path, "") }
    2.times { discover(install(path: real)) }
    assert_equal 4, probes.size
  end

  it "forgets everything when the probe script or the format changes, and survives a corrupt file" do
    discover
    data = JSON.parse(File.read(cache_path))
    File.write(cache_path, JSON.generate(data.merge("script" => "other")))
    discover
    File.write(cache_path, "{not json")
    discover
    assert_equal 3, probes.size
  end
end
