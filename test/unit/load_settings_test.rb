# frozen_string_literal: true

require "test_helper"

describe Rackbench::LoadSettings do
  def build(**options)
    Rackbench::LoadSettings.build(url: "http://127.0.0.1:1/", **options)
  end

  it "fills defaults" do
    s = build
    assert_equal 10, s.connections
    assert_equal 1, s.threads
    assert_equal 10.0, s.duration_s
    assert s.keepalive
    assert_equal 14.0, build(warmup_s: 2, duration_s: 10, timeout_s: 2).max_run_s
  end

  it "names the first bad value" do
    {
      { connections: 0 } => /invalid connections 0/,
      { threads: 3, connections: 2 } => /invalid threads 3 .*at most connections \(2\)/,
      { duration_s: 0 } => /invalid duration 0/,
      { warmup_s: -1 } => /invalid warmup -1/,
      { timeout_s: 0.0001 } => /invalid timeout/,
      { rate: 0 } => /invalid rate 0/,
      { keepalive: "yes" } => /invalid keepalive/,
      { headers: ["bad"] } => /invalid header/,
      { method: "get" } => /invalid method/,
      { seed: -1 } => /invalid seed/,
      { cpus: "1-" } => /invalid cpus/,
      { url: "ftp://127.0.0.1/" } => /invalid url/
    }.each do |options, pattern|
      error = assert_raises(Rackbench::UsageError) { build(**options) }
      assert_match pattern, error.message
    end
  end

  it "refuses unknown settings and a request file mixed with a method" do
    assert_raises(Rackbench::UsageError) { build(conections: 2) }
    error = assert_raises(Rackbench::UsageError) { build(requests_file: "r.txt", method: "POST") }
    assert_match(/cannot be combined/, error.message)
  end

  it "spells CPU lists for the engine" do
    assert_equal "1,3", build(cpus: [1, 3]).cpu_list
    assert_equal "0-3", build(cpus: "0-3").cpu_list
    assert_nil build.cpu_list
  end
end

describe Rackbench::Duration do
  it "parses the engine's spellings" do
    assert_equal 10.0, Rackbench::Duration.parse_s("10")
    assert_equal 10.0, Rackbench::Duration.parse_s("10s")
    assert_in_delta 0.25, Rackbench::Duration.parse_s("250ms")
    assert_in_delta 90.0, Rackbench::Duration.parse_s("1.5m")
    assert_in_delta 0.0001, Rackbench::Duration.parse_s("100us")
    assert_equal 3600.0, Rackbench::Duration.parse_s("1h")
    assert_equal 2.5, Rackbench::Duration.parse_s(2.5)
    %w[abc -1 10x 1e3].each { |bad| assert_raises(ArgumentError) { Rackbench::Duration.parse_s(bad) } }
  end

  it "writes durations exactly for the engine" do
    assert_equal "10s", Rackbench::Duration.to_engine(10.0)
    assert_equal "250000us", Rackbench::Duration.to_engine(0.25)
    assert_equal "0s", Rackbench::Duration.to_engine(0)
  end
end
