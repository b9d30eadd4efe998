# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

describe Rackbench::Experiment::Matrix do
  include Rackbench::Test::ExperimentSupport

  def configurations(overrides)
    build_experiment(overrides).configurations
  end

  describe "size" do
    it "is one configuration for a minimal file" do
      assert_equal 1, configurations({}).size
    end

    it "is the product of every dimension" do
      overrides = {
        "rubies" => ["ruby", { "name" => "ruby-yjit", "ruby" => "ruby", "options" => ["--yjit"] }],
        "servers" => %w[puma webrick unicorn], "apps" => %w[rack-hello rails-blog],
        "processes" => [1, 2], "threads" => [1, 4, 8],
        "load" => { "connections" => [32, 64], "keepalive" => [true, false], "duration" => "5s" },
        "env" => { "RUBY_GC_HEAP_INIT_SLOTS" => [10_000, 600_000], "RACK_ENV" => "production" }
      }
      assert_equal 2 * 3 * 2 * 2 * 3 * 2 * 2 * 2, configurations(overrides).size
    end

    it "is 96 for the full fixture (128 minus the 32 WEBrick configurations with 2 processes)" do
      experiment = Rackbench::Experiment.load(fixture("full.yml"), **known)
      assert_equal 96, experiment.configurations.size
      refute experiment.configurations.any? { |c| c.server.label == "webrick-default" && c.processes == 2 }
    end
  end

  describe "dims" do
    let(:experiment) do
      build_experiment("servers" => %w[puma webrick], "threads" => [1, 4],
                       "load" => { "connections" => [16, 32], "duration" => "5s", "warmup" => ["1s", "2s"] },
                       "env" => { "B" => ["1", "2"], "A" => "x" })
    end

    it "always holds ruby, server, app, processes and threads, plus load and env keys with several values" do
      assert_equal %w[ruby server app processes threads load.connections load.warmup env.B], experiment.dimensions.keys
      assert_equal experiment.dimensions.keys, experiment.configurations.first.dims.keys
      assert_equal [1.0, 2.0], experiment.dimensions["load.warmup"]
    end

    it "enumerates in matrix order: the file's order, first dimension outermost" do
      first, second = experiment.configurations.first(2)
      assert_equal({ "ruby" => "ruby", "server" => "puma", "app" => "rack-hello", "processes" => 1, "threads" => 1,
                     "load.connections" => 16, "load.warmup" => 1.0, "env.B" => "1" }, first.dims)
      assert_equal "2", second.dims["env.B"]
      assert_equal "webrick", experiment.configurations.last.dims["server"]
    end

    it "resolves every load setting, keyed for LoadSettings.build" do
      config = experiment.configurations.last
      assert_equal({ connections: 32, threads: 1, duration_s: 5.0, warmup_s: 2.0, rate: nil, keepalive: true,
                     requests_file: nil, timeout_s: nil, cookies: nil, headers: [], cookie_presets: [],
                     protocol: "http1", streams: 1, host: nil,
                     tls: false, tls_resume: true, count: nil, think_s: nil, warmup_count: nil,
                     workload: "http", clients: nil, ramp_s: 0.0, interval_s: nil, broadcaster: nil,
                     message_bytes: nil }, config.load)
      assert_equal({ "B" => "2", "A" => "x" }, config.env)
      assert_equal %w[ruby webrick rack-hello], [config.ruby.label, config.server.name, config.app.name]
      assert_equal 4, config.server_threads
    end

    it "prints a configuration for humans" do
      assert_equal "ruby=ruby server=webrick app=rack-hello processes=1 threads=4 load.connections=32 " \
                   "load.warmup=2s env.B=2", experiment.configurations.last.to_s
    end
  end

  describe "key" do
    it "is the canonical JSON of the dims" do
      config = configurations("threads" => [1, 4]).last
      assert_equal '{"app":"rack-hello","processes":1,"ruby":"ruby","server":"puma","threads":4}', config.key
    end

    it "is unique within an experiment" do
      keys = Rackbench::Experiment.load(fixture("full.yml"), **known).configurations.map(&:key)
      assert_equal keys.size, keys.uniq.size
    end

    it "is stable across key order, list order and spelling" do
      one = configurations("threads" => [1, 4], "load" => { "duration" => ["5s", "10s"] }).map(&:key).sort
      other = parse_yaml("load: { duration: [10, 5.0] }\nthreads: [4, 1]\napps: rack-hello\nservers: puma\nname: other\n")
              .configurations.map(&:key).sort
      assert_equal one, other
    end
  end

  describe "exclude" do
    let(:sweep) { { "servers" => %w[puma webrick], "processes" => [1, 2], "threads" => [1, 4] } }

    it "removes every configuration matching all keys of an entry" do
      configs = configurations(sweep.merge("exclude" => [{ "server" => "webrick", "processes" => 2 }]))
      assert_equal 6, configs.size
      assert_equal [[1, 1], [1, 4]], configs.select { |c| c.server.name == "webrick" }.map { |c| [c.processes, c.threads] }
    end

    it "takes a list of values as any of them, and several entries as any entry" do
      configs = configurations(sweep.merge("exclude" => [{ "server" => "webrick", "processes" => [1, 2], "threads" => 4 },
                                                          { "server" => "puma", "threads" => 1 }]))
      assert_equal [%w[puma 1 4], %w[puma 2 4], %w[webrick 1 1], %w[webrick 2 1]],
                   configs.map { |c| [c.server.name, c.processes.to_s, c.threads.to_s] }.sort
    end

    it "matches load and env values as normalized ('10s' is 10)" do
      configs = configurations("load" => { "duration" => [5, 10] }, "env" => { "N" => [1, 2] },
                               "exclude" => [{ "load.duration" => "10s", "env.N" => 2 }])
      assert_equal [[5.0, "1"], [5.0, "2"], [10.0, "1"]], configs.map { |c| [c.load[:duration_s], c.env["N"]] }
    end

    it "matches rubies and servers by label" do
      configs = configurations("servers" => ["puma", { "name" => "puma", "label" => "puma-preload" }],
                               "exclude" => [{ "server" => "puma-preload" }])
      assert_equal ["puma"], configs.map { |c| c.server.label }
    end

    it "is kept on the experiment, normalized" do
      experiment = build_experiment(sweep.merge("exclude" => { "server" => "webrick", "processes" => 2 }))
      assert_equal [{ "server" => ["webrick"], "processes" => [2] }], experiment.exclude
    end
  end
end
