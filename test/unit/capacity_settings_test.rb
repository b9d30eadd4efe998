# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/capacity_support"

describe Rackbench::Capacity::Settings do
  BASE_FILE = <<~YAML
    name: cap
    servers: [puma]
    apps: [rack-hello]
  YAML

  def parse(capacity_yaml, extra = "")
    Rackbench::Experiment.parse("#{BASE_FILE}#{extra}#{capacity_yaml}", source: "cap.yml")
  end

  def error(capacity_yaml, extra = "")
    assert_raises(Rackbench::ConfigError) { parse(capacity_yaml, extra) }.message
  end

  it "reads every setting, and fills the defaults" do
    full = parse(<<~YAML).capacity
      capacity:
        p95: 20ms
        max_errors: 1%
        start_rate: 50
        max_rate: 900
        resolution: 25
        ramp: 1.5
        duration: 2s
        warmup: 500ms
        confirmations: 3
    YAML
    assert_equal ["p95", 95.0, 20_000.0, 0.01, 50.0, 900.0], [full.percentile_key, full.percentile, full.target_us,
                                                            full.max_error_ratio, full.start_rate, full.max_rate]
    assert_equal [nil, 25.0, 1.5, 2.0, 0.5, 3], [full.resolution_ratio, full.resolution_rps, full.ramp, full.duration_s,
                                                 full.warmup_s, full.confirmations]
    assert_equal 25.0, full.resolution_at(1000)

    plain = parse("capacity: { p999: 1s }\n").capacity
    assert_equal ["p999", 99.9, 1e6, 0.001, 100.0, 100_000.0], [plain.percentile_key, plain.percentile, plain.target_us,
                                                               plain.max_error_ratio, plain.start_rate, plain.max_rate]
    assert_equal [0.05, nil, 2.0, nil, nil, 2], [plain.resolution_ratio, plain.resolution_rps, plain.ramp,
                                                 plain.duration_s, plain.warmup_s, plain.confirmations]
    assert_in_delta 50.0, plain.resolution_at(1000)
  end

  it "is in the fingerprint only when given: a file without it keeps its own" do
    without = parse("")
    assert_nil without.capacity
    refute without.canonical.key?("capacity")
    with = parse("capacity: { p99: 50ms }\n")
    refute_equal without.fingerprint, with.fingerprint
    refute_equal with.fingerprint, parse("capacity: { p99: 60ms }\n").fingerprint
    assert_equal with.fingerprint, parse("capacity: { p99: 0.05s }\n").fingerprint
    assert_equal with.capacity.to_h, with.with(seed: 9).capacity.to_h
  end

  it "names the key of every mistake in one line" do
    {
      "capacity: { p98: 50ms }\n" => /cap\.yml: capacity\.p98: unknown key \(did you mean p99\?\)/,
      "capacity: { max_errors: 1% }\n" => /capacity: needs exactly one latency target.*got none/,
      "capacity: { p99: 50ms, p95: 20ms }\n" => /capacity: needs exactly one latency target.*got p95, p99/,
      "capacity: { p99: fast }\n" => /capacity\.p99: invalid duration "fast"/,
      "capacity: { p99: 0ms }\n" => /capacity\.p99: must be more than 0/,
      "capacity: { p99: 50ms, max_errors: 120% }\n" => /capacity\.max_errors: must be a fraction/,
      "capacity: { p99: 50ms, start_rate: 0 }\n" => /capacity\.start_rate: must be requests\/s of at least 1/,
      "capacity: { p99: 50ms, start_rate: 500, max_rate: 100 }\n" => /capacity\.start_rate: 500\.0 is above capacity\.max_rate 100\.0/,
      "capacity: { p99: 50ms, resolution: 0% }\n" => /capacity\.resolution: must be over 0% and at most 50%/,
      "capacity: { p99: 50ms, resolution: fine }\n" => /capacity\.resolution: must be a percentage such as 5%/,
      "capacity: { p99: 50ms, ramp: 1 }\n" => /capacity\.ramp: must be a factor over 1/,
      "capacity: { p99: 50ms, duration: 0s }\n" => /capacity\.duration: must be more than 0/,
      "capacity: { p99: 50ms, confirmations: -1 }\n" => /capacity\.confirmations/,
      "capacity: 50ms\n" => /capacity: must be a mapping/
    }.each do |yaml, pattern|
      message = error(yaml)
      assert_match pattern, message, yaml
      assert_equal 1, message.lines.size
    end
  end

  it "refuses load.rate beside capacity: (each step sets its own), and accepts it without" do
    assert_match(/cap\.yml: load\.rate: cannot be set with capacity:/, error("capacity: { p99: 50ms }\n", "load: { rate: 100 }\n"))
    assert_in_delta 100.0, parse("", "load: { rate: 100 }\n").configurations.first.load[:rate]
    assert_nil parse("capacity: { p99: 50ms }\n", "load: { rate: null }\n").configurations.first.load[:rate]
  end

  # (that `run` takes a file without the section is every run test)
  it "makes rackbench run refuse the file with a hint, and rackbench capacity refuse a file without the section" do
    dir = Dir.mktmpdir("rackbench-capacity-cli")
    with = File.join(dir, "with.yml")
    without = File.join(dir, "without.yml")
    File.write(with, "#{BASE_FILE}capacity: { p99: 50ms }\n")
    File.write(without, BASE_FILE)
    err = StringIO.new
    assert_equal Rackbench::CLI::EXIT_USAGE, Rackbench::CLI.run(["run", with, "--dry-run"], out: StringIO.new, err: err)
    assert_equal "rackbench: #{with} has a capacity: section: run it with rackbench capacity #{with}\n", err.string
    err = StringIO.new
    assert_equal Rackbench::CLI::EXIT_USAGE, Rackbench::CLI.run(["capacity", without], out: StringIO.new, err: err)
    assert_match(/\Arackbench: #{Regexp.escape(without)} has no capacity: section/, err.string)
  ensure
    FileUtils.rm_rf(dir)
  end
end
