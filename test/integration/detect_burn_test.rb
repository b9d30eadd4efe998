# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# rack-hello's known slowdown (RACK_HELLO_BURN_US) on a real Puma, and
# `rackbench run --detect` end to end: one short run of rack-hello against
# itself burning 300 µs per request, shared by the assertions. The burning
# side proves the knob from inside the server (its check wants the body's
# "burn_us=300"; the identity check reports the variable each process saw);
# the plain side runs without it (reported unset) and does not burn.
describe "rack-hello's burn knob and run --detect (integration)" do
  before { require_engine! }

  BURN_US = 300

  # One run for every assertion: 2 configurations x at most 3 batches of 1 s.
  def self.outcome
    @outcome ||= begin
      dir = Dir.mktmpdir("rackbench-detect-burn")
      file = File.join(dir, "burn.yml")
      File.write(file, <<~YAML)
        name: detect-burn
        seed: 2
        rubies: [ruby]
        servers: [puma]
        apps:
          - rack-hello
          - { name: rack-hello-burn, path: #{File.expand_path("../../apps/rack-hello", __dir__)},
              env: { RACK_HELLO_BURN_US: "#{BURN_US}" }, expect_content_type: text/plain, expect_body: "burn_us=#{BURN_US}" }
        processes: 1
        threads: 1
        load: { connections: 2, duration: 1s, warmup: 0.5s, timeout: 2s } # a timeout given: no calibration boot
      YAML
      results = File.join(dir, "results")
      out, err, status = rackbench("run", file, "--detect", "50%", "--pilot-batches", "2",
                                        "--max-batches", "3", "--json", "--results", results)
      records = Rackbench::Store.open(results, &:trials)
      { status: status, out: out, err: err, records: records, dir: dir }
    end
  end

  Minitest.after_run { FileUtils.rm_rf(outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }
  let(:document) { JSON.parse(outcome[:out]) }

  def config(app)
    document["configs"].find { |c| c["dims"]["app"] == app }
  end

  it "runs the pilot, decides, and stops within --max-batches" do
    assert outcome[:status].success?, outcome[:err]
    assert_includes outcome[:err], "pilot of 2 batches done; CV of requests/s per batch: "
    assert_match(/to detect 50%: .*running [23] batches in all/, outcome[:err])
    batches = outcome[:records].map(&:batch)
    assert_operator batches.max, :<=, 3
    assert_equal 2, outcome[:records].count { |r| r.batch == 1 }
    assert_equal 0.5, document.dig("detect", "settings", "effect")
    comparison = document.dig("detect", "comparisons", 0)
    assert_equal %w[rack-hello-burn rack-hello], comparison.values_at("config", "baseline")
    assert_match(/power \d+% to detect 50%/, comparison["statement"])
  end

  it "burns when set, proven inside the server: its check saw burn_us and every process the variable" do
    burning = outcome[:records].select { |r| r.app == "rack-hello-burn" }
    refute_empty burning
    assert(burning.all?(&:ok?), "the check wanted the body's burn_us=#{BURN_US}: #{burning.map(&:reason).compact}")
    burning.each { |r| assert_equal BURN_US.to_s, r.identity["env"]["RACK_HELLO_BURN_US"] }
    # Every request burns BURN_US µs of its thread's CPU: the server's CPU per request is at least that.
    assert_operator config("rack-hello-burn").dig("inside", "figures", "cpu_us_per_request", "median"), :>=, BURN_US
  end

  it "does not burn when unset: reported unset in every process, and half a burn cheaper at least" do
    plain = outcome[:records].select { |r| r.app == "rack-hello" }
    assert(plain.all?(&:ok?))
    plain.each do |r|
      assert r.identity["env"].key?("RACK_HELLO_BURN_US"), "checked, since another app sets it"
      assert_nil r.identity["env"]["RACK_HELLO_BURN_US"]
    end
    cpu_us = ->(app) { config(app).dig("inside", "figures", "cpu_us_per_request", "median") }
    assert_operator cpu_us.call("rack-hello"), :<, cpu_us.call("rack-hello-burn") - BURN_US / 2
  end
end
