# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/fakes"

describe Rackbench::Trial::Http::Calibration do
  let(:calibration) { Rackbench::Trial::Http::Calibration }

  describe ".timeout_for" do
    it "is ten times the slowest response, rounded up to a tenth of a second" do
      assert_equal 8.2, calibration.timeout_for(812_345.0)
      assert_equal 10.0, calibration.timeout_for(1_000_000.0)
      assert_equal 10.1, calibration.timeout_for(1_000_001.0)
    end

    it "never goes below the 2 s floor" do
      assert_equal 2.0, calibration.timeout_for(5_038.46)
      assert_equal 2.0, calibration.timeout_for(199_999.0)
    end
  end

  describe "#measure" do
    let(:settings) do
      Rackbench::LoadSettings.build(url: "http://127.0.0.1:9/", connections: 6, duration_s: 30.0, warmup_s: 5.0,
                                    rate: 100.0, timeout_s: 2.0, raw_file: "/tmp/raw.csv", requests_file: nil)
    end

    # The canned engine result with some values replaced ("errors.timeout" => 2).
    def result_with(changes)
      JSON.parse(JSON.generate(Fakes::ENGINE_RESULT)).tap do |r|
        changes.each do |path, value|
          *parents, key = path.split(".")
          (parents.empty? ? r : r.dig(*parents))[key] = value
        end
      end
    end

    it "runs a short closed loop with the trial's connections and a long ceiling" do
      engine = Fakes::Engine.new
      result = calibration.new(engine: engine, marker_env: { "M" => "1" }).measure(settings)
      sent = engine.settings.first
      assert_equal [6, nil, 120.0, 0.25, 0.75, nil],
                   [sent.connections, sent.rate, sent.timeout_s, sent.warmup_s, sent.duration_s, sent.raw_file]
      assert_equal [{ "M" => "1" }], engine.envs
      assert_equal [6, 400, 5038.46, 2.0], [result.connections, result.requests, result.latency_max_us, result.timeout_s]
    end

    # An engine returning the given results in turn.
    def engine_returning(*results)
      Class.new(Fakes::Engine) do
        define_method(:run) do |settings, env: {}, on_phase: nil|
          super(settings, env: env, on_phase: on_phase)
          Rackbench::LoadResult.new(results.fetch(calls - 1))
        end
      end.new
    end

    it "measures again, longer, when the first window saw too few responses for the queue to fill" do
      # 6 connections want 12 responses; 1 s saw 4 (1 in the warmup, 3 in
      # the window): 4 per second, so 1.5 x 12 / 4 = 4.5 s.
      few = result_with("requests" => 3, "warmup.requests" => 1)
      engine = engine_returning(few, result_with("latency_us.max" => 2_400_000.0))
      result = calibration.new(engine: engine).measure(settings)
      assert_equal [[0.25, 0.75], [0.0, 4.5]], engine.settings.map { |s| [s.warmup_s, s.duration_s] }
      assert_equal [2_400_000.0, 24.0], [result.latency_max_us, result.timeout_s]
    end

    it "waits the longest window for an app that answered nothing in the first" do
      none = result_with("requests" => 0, "warmup.requests" => 0, "duration_s" => 60.0)
      engine = engine_returning(result_with("requests" => 0, "warmup.requests" => 0), none)
      error = assert_raises(Rackbench::SetupError) { calibration.new(engine: engine).measure(settings) }
      assert_equal 60.0, engine.settings.last.duration_s
      assert_match(/no response within 60 s at 6 connections \(no error either\); the app is too slow/, error.message)
    end

    it "refuses a load under which responses are lost, or none comes" do
      lost = Fakes::Engine.new(result: result_with("errors.timeout" => 2))
      error = assert_raises(Rackbench::SetupError) { calibration.new(engine: lost).measure(settings) }
      assert_match(/2 responses took over 120 s at 6 connections; lower load.connections or set load.timeout/,
                   error.message)
      none = Fakes::Engine.new(result: result_with("requests" => 0, "errors.connect" => 5))
      error = assert_raises(Rackbench::SetupError) { calibration.new(engine: none).measure(settings) }
      assert_match(/no response within 2 s at 6 connections \(errors: \{"connect"=>5\}\); the server does not answer/,
                   error.message)
    end
  end

  describe "Store" do
    let(:dir) { Dir.mktmpdir("rackbench-calibration") }
    after { FileUtils.rm_rf(dir) }

    it "keeps a result per configuration across instances, and measures again over a damaged file" do
      result = calibration::Result.new(connections: 4, requests: 9, latency_p50_us: 1.0, latency_p99_us: 2.0,
                                       latency_max_us: 3.0, rps: 4.5, timeout_s: 2.0, measured_at: "2026-11-24T00:00:00Z")
      calibration::Store.new(dir).save('{"a":1}', result)
      assert_equal result, calibration::Store.new(dir).fetch('{"a":1}')
      assert_nil calibration::Store.new(dir).fetch('{"a":2}')
      File.write(Dir.glob(File.join(dir, "calibration", "*.json")).first, "{not json")
      assert_nil calibration::Store.new(dir).fetch('{"a":1}')
    end
  end
end
